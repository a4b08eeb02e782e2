/// A queue's state as cupsd reports it (IPP Get-Printer-Attributes).
public struct CUPSPrinterStatus: Sendable, Equatable, CustomStringConvertible {
    /// The queue asked about (the resolved default when none was named).
    public let queue: String
    /// False when cupsd answered that there is no such queue; every other field
    /// is then empty/false/nil.
    public let exists: Bool
    /// `printer-is-accepting-jobs` (false after `cupsreject`).
    public let accepting: Bool
    /// `printer-state`; `.stopped` after `cupsdisable` or a backend error.
    public let state: CUPSPrinterState?
    /// `printer-state-reasons`, e.g. `none`, `paused`.
    public let stateReasons: [String]
    /// `printer-state-message`, e.g. `Paused` or the backend's last error; nil if empty.
    public let stateMessage: String?

    public init(
        queue: String, exists: Bool, accepting: Bool, state: CUPSPrinterState?,
        stateReasons: [String], stateMessage: String?
    ) {
        self.queue = queue
        self.exists = exists
        self.accepting = accepting
        self.state = state
        self.stateReasons = stateReasons
        self.stateMessage = stateMessage
    }

    /// A queue that cupsd says does not exist.
    public static func missing(_ queue: String) -> CUPSPrinterStatus {
        CUPSPrinterStatus(queue: queue, exists: false, accepting: false, state: nil, stateReasons: [], stateMessage: nil)
    }

    /// Exists, accepts jobs and is not stopped: a submitted job will print.
    public var isReady: Bool { exists && accepting && state != .stopped }

    public var description: String {
        guard exists else { return "queue \(queue): does not exist" }
        var text = "queue \(queue): \(state.map { "\($0)" } ?? "unknown")"
        text += accepting ? ", accepting" : ", not accepting"
        text += " [\(stateReasons.joined(separator: ","))]"
        if let stateMessage { text += ": \(stateMessage)" }
        return text
    }
}
