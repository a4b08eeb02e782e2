/// IPP `job-state` (RFC 8011 §5.3.7).
public enum CUPSJobState: Int32, Sendable, CaseIterable, CustomStringConvertible {
    case pending = 3
    case held = 4
    case processing = 5
    /// processing-stopped: the job was printing when its printer stopped.
    case stopped = 6
    case cancelled = 7
    case aborted = 8
    case completed = 9

    /// cancelled, aborted and completed jobs will not change any more.
    public var isTerminal: Bool {
        switch self {
        case .cancelled, .aborted, .completed: return true
        case .pending, .held, .processing, .stopped: return false
        }
    }

    public var description: String {
        switch self {
        case .pending: return "pending"
        case .held: return "held"
        case .processing: return "processing"
        case .stopped: return "stopped"
        case .cancelled: return "cancelled"
        case .aborted: return "aborted"
        case .completed: return "completed"
        }
    }
}
