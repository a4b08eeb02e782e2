import Foundation

/// A job's state as cupsd reports it (IPP Get-Job-Attributes / Get-Jobs).
public struct CUPSJobStatus: Sendable, Equatable, CustomStringConvertible {
    public let id: Int32
    public let state: CUPSJobState
    /// `job-state-reasons`, e.g. `job-printing`, `printer-stopped`,
    /// `job-completed-successfully`, `job-canceled-by-user`, `aborted-by-system`.
    public let stateReasons: [String]
    /// `job-printer-state-message`: the last message of the job's filters/backend
    /// (the backend's `ERROR:`/`INFO:` text without that prefix); nil if empty.
    public let printerStateMessage: String?
    /// `job-name` (the title given at submission).
    public let name: String?
    /// The queue, from `job-printer-uri`.
    public let queue: String?
    /// `job-originating-user-name`.
    public let user: String?
    /// `time-at-creation`.
    public let createdAt: Date?
    /// `time-at-completed`, set once the job is terminal.
    public let completedAt: Date?

    public init(
        id: Int32, state: CUPSJobState, stateReasons: [String], printerStateMessage: String?,
        name: String?, queue: String?, user: String?, createdAt: Date?, completedAt: Date?
    ) {
        self.id = id
        self.state = state
        self.stateReasons = stateReasons
        self.printerStateMessage = printerStateMessage
        self.name = name
        self.queue = queue
        self.user = user
        self.createdAt = createdAt
        self.completedAt = completedAt
    }

    public var description: String {
        var text = "job \(id) \(state) [\(stateReasons.joined(separator: ","))]"
        if let queue { text += " on \(queue)" }
        if let name { text += " \"\(name)\"" }
        if let printerStateMessage { text += ": \(printerStateMessage)" }
        return text
    }
}
