/// A job found by `CUPSClient.findJobs(named:queue:)`.
public struct CUPSJob: Sendable, Equatable, CustomStringConvertible {
    public let id: Int32
    /// `job-name`.
    public let name: String
    /// The queue, from `job-printer-uri`.
    public let queue: String?
    /// Its state when it was listed.
    public let status: CUPSJobStatus

    public init(id: Int32, name: String, queue: String?, status: CUPSJobStatus) {
        self.id = id
        self.name = name
        self.queue = queue
        self.status = status
    }

    public var state: CUPSJobState { status.state }

    public var description: String { status.description }
}
