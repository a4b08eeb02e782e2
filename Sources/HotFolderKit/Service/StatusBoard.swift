import Foundation
import Glibc
import Synchronization

/// What a running service knows about one folder, kept current and written
/// (at most a few times a second) to `<drop>/.hotfolder/<instance>/status.json`
/// for `hotfolder status`: each destination's availability with the source that
/// said no and why, and the documents that wait with their reasons.
final class StatusBoard: @unchecked Sendable {
    struct Destination: Codable, Equatable, Sendable {
        var destination: DestinationKind
        var target: String
        var available: Bool
        /// Which source made it unavailable: "printer", "cupsd", "export folder".
        var source: String?
        var reason: String?
    }

    struct Waiting: Codable, Equatable, Sendable {
        var job: String
        var document: String
        var reason: String
    }

    struct Snapshot: Codable, Sendable {
        var folder: String
        var path: String
        var instance: String
        var pid: Int32
        var updated: Double
        var destinations: [Destination]
        var waiting: [Waiting]
        var inProgress: Int
    }

    static let fileName = "status.json"

    private let directory: Directory
    private let state: Mutex<Snapshot>
    private let dirty = Mutex(false)
    private let writer = DispatchQueue(label: "status-board")

    init(folder: FolderConfiguration, instance: String, directory: Directory) {
        self.directory = directory
        var destinations: [Destination] = []
        if let e = folder.export { destinations.append(Destination(destination: .export, target: e.exportFolder, available: true)) }
        if let p = folder.print {
            destinations.append(Destination(destination: .print, target: p.printer.map { "queue \($0)" } ?? "the default CUPS destination", available: true))
        }
        state = Mutex(Snapshot(folder: folder.name, path: folder.path, instance: instance, pid: getpid(), updated: Date().timeIntervalSince1970,
                               destinations: destinations, waiting: [], inProgress: 0))
        scheduleWrite()
    }

    var snapshot: Snapshot { state.withLock { $0 } }

    /// Records why a job waits (nil: it no longer waits). True when the reason changed.
    @discardableResult
    func setWaiting(job: String, document: String, reason: String?) -> Bool {
        let changed = state.withLock { s -> Bool in
            let old = s.waiting.first { $0.job == job }?.reason
            guard old != reason else { return false }
            s.waiting.removeAll { $0.job == job }
            if let reason { s.waiting.append(Waiting(job: job, document: document, reason: reason)) }
            return true
        }
        if changed { scheduleWrite() }
        return changed
    }

    func setDestination(_ kind: DestinationKind, available: Bool, source: String? = nil, reason: String? = nil) {
        let changed = state.withLock { s -> Bool in
            guard let i = s.destinations.firstIndex(where: { $0.destination == kind }) else { return false }
            let new = Destination(destination: kind, target: s.destinations[i].target, available: available,
                                  source: available ? nil : source, reason: available ? nil : reason)
            guard s.destinations[i] != new else { return false }
            s.destinations[i] = new
            return true
        }
        if changed { scheduleWrite() }
    }

    func adjustInProgress(_ delta: Int) {
        state.withLock { $0.inProgress = max(0, $0.inProgress + delta) }
        scheduleWrite()
    }

    /// Coalesces changes: one write per quarter second at most.
    private func scheduleWrite() {
        let first = dirty.withLock { d -> Bool in
            defer { d = true }
            return !d
        }
        guard first else { return }
        writer.asyncAfter(deadline: .now() + 0.25) { [self] in
            dirty.withLock { $0 = false }
            write()
        }
    }

    func write() {
        var snapshot = state.withLock { $0 }
        snapshot.updated = Date().timeIntervalSince1970
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(snapshot) else { return }
        let temporary = ".status-\(getpid()).tmp"
        try? directory.remove(temporary)
        guard let file = try? directory.createFile(temporary) else { return }
        try? file.write(Array(data))
        try? directory.move(temporary, to: directory, as: Self.fileName, mode: .replace)
    }

    /// Reads what a service wrote for a folder; nil when none did.
    static func read(serviceArea: String, instance: String) -> Snapshot? {
        guard let data = FileManager.default.contents(atPath: "\(serviceArea)/\(instance)/\(fileName)") else { return nil }
        return try? JSONDecoder().decode(Snapshot.self, from: data)
    }
}
