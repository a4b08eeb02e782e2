/// IPP `printer-state` (RFC 8011 §5.4.11).
public enum CUPSPrinterState: Int32, Sendable, CaseIterable, CustomStringConvertible {
    case idle = 3
    case processing = 4
    /// Disabled (`cupsdisable`) or stopped by a backend error.
    case stopped = 5

    public var description: String {
        switch self {
        case .idle: return "idle"
        case .processing: return "processing"
        case .stopped: return "stopped"
        }
    }
}
