/// Why a job failed, in the words the error file and the log use: which step,
/// what went wrong, and what the person who dropped the file can do.
public struct JobFailure: Error, Sendable, Codable, Equatable, CustomStringConvertible {
    public enum Step: String, Sendable, Codable {
        case claim = "claim the file"
        case identify = "identify the document"
        case open = "open the document"
        case options = "choose the options"
        case ticket = "apply the job ticket"
        case generate = "generate the output"
        case export = "export"
        case print = "print"
        case finish = "finish"
    }

    public let step: Step
    public let reason: String
    public let remedy: String
    /// A temporary fault (space, permissions, a missing folder): the job waits
    /// and retries instead of failing the document.
    public let transient: Bool

    public init(_ step: Step, _ reason: String, remedy: String, transient: Bool = false) {
        self.step = step
        self.reason = reason
        self.remedy = remedy
        self.transient = transient
    }

    public var description: String { "\(step.rawValue): \(reason)" }
}
