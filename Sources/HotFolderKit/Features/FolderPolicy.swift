import Foundation

/// The folder's policy (`allow =`): which of its configured destinations it may
/// use now. An administrator pauses printing (`allow = export`) and reloads;
/// documents wait for print, and go once a reload allows it again.
final class FolderPolicy: ProbedSource, @unchecked Sendable {
    private let answer: Availability

    init(folder: FolderConfiguration, destination: DestinationKind) {
        if let allow = folder.allow, !allow.contains(destination) {
            let allowed = allow.isEmpty ? "none" : allow.map(\.rawValue).joined(separator: ", ")
            answer = .unavailable("the folder's policy (allow = \(allowed)) does not allow \(destination.rawValue) now; add it to allow and reload (SIGHUP) to let the waiting documents go")
        } else {
            answer = .available
        }
        super.init(sourceName: "folder policy", maxDelay: 3600)
        set(answer)
    }

    override func probe() -> Availability { answer }
}
