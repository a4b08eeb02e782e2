/// What went wrong talking to CUPS.
///
/// Every IPP-level case carries the IPP status code (`status`, e.g. `0x0406`), its
/// keyword (`statusName`, e.g. `client-error-not-found`, from `ippErrorString`),
/// libcups' `cupsLastErrorString()` (`message`) and what it concerned (server,
/// queue, job or file).
public enum CUPSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No cupsd answers at `server`: the domain socket does not exist, nobody
    /// listens on it (a killed cupsd leaves its socket file behind), the TCP
    /// connection is refused, or the connection broke during a request.
    case serverUnreachable(server: String, status: Int32, statusName: String, message: String)

    /// cupsd answered that the queue (printer or class) does not exist.
    case noSuchQueue(queue: String, server: String, status: Int32, statusName: String, message: String)

    /// A request named no queue and the server has no default destination.
    case noDefaultQueue(server: String)

    /// The queue exists but rejects jobs (`cupsreject`, printer-is-accepting-jobs false).
    case notAcceptingJobs(queue: String, server: String, status: Int32, statusName: String, message: String)

    /// cupsd has no job with this id (never existed, or purged from the history).
    case noSuchJob(id: Int32, server: String, status: Int32, statusName: String, message: String)

    /// Any other IPP or HTTP failure of `operation` on `target` (a queue, "job N" or the server).
    case ipp(operation: String, target: String, server: String, status: Int32, statusName: String, message: String)

    /// The local document could not be opened or read; `errno` is the POSIX error number.
    case localFile(path: String, errno: Int32, message: String)

    /// The IPP status code, when the error came from libcups or cupsd.
    public var ippStatus: Int32? {
        switch self {
        case .serverUnreachable(_, let status, _, _),
             .noSuchQueue(_, _, let status, _, _),
             .notAcceptingJobs(_, _, let status, _, _),
             .noSuchJob(_, _, let status, _, _),
             .ipp(_, _, _, let status, _, _):
            return status
        case .noDefaultQueue, .localFile:
            return nil
        }
    }

    public var description: String {
        switch self {
        case let .serverUnreachable(server, status, statusName, message):
            return "CUPS server \(server) is unreachable: \(message) (IPP \(Self.hex(status)) \(statusName))"
        case let .noSuchQueue(queue, server, status, statusName, message):
            return "CUPS queue \"\(queue)\" does not exist on \(server): \(message) (IPP \(Self.hex(status)) \(statusName))"
        case let .noDefaultQueue(server):
            return "No queue given and CUPS server \(server) has no default destination"
        case let .notAcceptingJobs(queue, server, status, statusName, message):
            return "CUPS queue \"\(queue)\" on \(server) is not accepting jobs: \(message) (IPP \(Self.hex(status)) \(statusName))"
        case let .noSuchJob(id, server, status, statusName, message):
            return "CUPS job \(id) does not exist on \(server): \(message) (IPP \(Self.hex(status)) \(statusName))"
        case let .ipp(operation, target, server, status, statusName, message):
            return "CUPS \(operation) on \(target) at \(server) failed: \(message) (IPP \(Self.hex(status)) \(statusName))"
        case let .localFile(path, errno, message):
            return "Cannot read \(path): \(message) (errno \(errno))"
        }
    }

    static func hex(_ status: Int32) -> String {
        let digits = String(UInt32(bitPattern: status), radix: 16)
        return "0x" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
