import CCUPS
import Foundation
import Glibc

/// One `http_t` to cupsd for the duration of one `CUPSClient` call, on one thread
/// (libcups keeps its last-error state per thread, so it is read right after
/// each libcups call, before anything else can run on this thread).
final class CUPSConnection {
    /// What a request was about, to turn IPP statuses into `CUPSError` cases.
    enum Target {
        case server
        case queue(String)
        case job(Int32)

        var text: String {
            switch self {
            case .server: return "server"
            case .queue(let name): return "queue \"\(name)\""
            case .job(let id): return "job \(id)"
            }
        }
    }

    let http: OpaquePointer
    let server: String

    private init(http: OpaquePointer, server: String) {
        self.http = http
        self.server = server
    }

    deinit {
        httpClose(http)
    }

    /// Connects, or throws `.serverUnreachable`.
    static func open(server: String, timeoutMilliseconds: Int32) throws -> CUPSConnection {
        let address = CUPSServerAddress(parsing: server)
        guard let http = httpConnect2(
            address.host, address.port, nil, AF_UNSPEC, HTTP_ENCRYPTION_IF_REQUESTED, 1, timeoutMilliseconds, nil
        ) else {
            // libcups reports 0x0502 "Host is down" (or similar) whatever the cause;
            // for a domain socket, find the real one.
            let status = cupsLastError()
            var message = lastErrorString(status)
            if address.isDomainSocket {
                message = "\(domainSocketProblem(address.host)) (libcups: \(message))"
            }
            throw CUPSError.serverUnreachable(
                server: server, status: code(status), statusName: name(status), message: message
            )
        }
        return CUPSConnection(http: http, server: server)
    }

    /// Sends `request` (consumed) to `resource`; returns the response when its
    /// status is successful-ok*, otherwise throws the classified error.
    func perform(
        _ request: IPPMessage, resource: String, operation: String, target: Target
    ) throws -> IPPMessage {
        guard let raw = request.release() else {
            throw CUPSError.ipp(
                operation: operation, target: target.text, server: server,
                status: Self.code(IPP_STATUS_ERROR_INTERNAL), statusName: Self.name(IPP_STATUS_ERROR_INTERNAL),
                message: "could not build the IPP request"
            )
        }
        let response = cupsDoRequest(http, raw, resource)
        let status = cupsLastError()
        let message = Self.lastErrorString(status)
        let transportError = httpError(http)
        guard let response else {
            throw classify(
                status: status, message: message, operation: operation, target: target,
                transportFailed: true, transportError: transportError
            )
        }
        let result = IPPMessage(ipp: response)
        guard Self.isSuccess(status) else {
            throw classify(
                status: status, message: message, operation: operation, target: target,
                transportFailed: false, transportError: transportError
            )
        }
        return result
    }

    /// Builds the error for a failed request. `transportFailed`: no IPP response came back.
    func classify(
        status: ipp_status_t, message: String, operation: String, target: Target,
        transportFailed: Bool, transportError: Int32
    ) -> CUPSError {
        let statusCode = Self.code(status)
        let statusName = Self.name(status)
        if transportFailed && (transportError != 0 || status == IPP_STATUS_ERROR_SERVICE_UNAVAILABLE) {
            var text = message
            if transportError != 0, let reason = strerror(transportError) {
                text += " (\(String(cString: reason)))"
            }
            return .serverUnreachable(server: server, status: statusCode, statusName: statusName, message: text)
        }
        switch (status, target) {
        case (IPP_STATUS_ERROR_NOT_FOUND, .queue(let queue)):
            return .noSuchQueue(queue: queue, server: server, status: statusCode, statusName: statusName, message: message)
        case (IPP_STATUS_ERROR_NOT_FOUND, .job(let id)):
            return .noSuchJob(id: id, server: server, status: statusCode, statusName: statusName, message: message)
        case (IPP_STATUS_ERROR_NOT_ACCEPTING_JOBS, .queue(let queue)):
            return .notAcceptingJobs(
                queue: queue, server: server, status: statusCode, statusName: statusName, message: message
            )
        default:
            return .ipp(
                operation: operation, target: target.text, server: server,
                status: statusCode, statusName: statusName, message: message
            )
        }
    }

    // MARK: Helpers

    static func code(_ status: ipp_status_t) -> Int32 {
        Int32(truncatingIfNeeded: status.rawValue)
    }

    static func name(_ status: ipp_status_t) -> String {
        ippErrorString(status).map { String(cString: $0) } ?? "unknown"
    }

    static func isSuccess(_ status: ipp_status_t) -> Bool {
        let value = code(status)
        return value >= 0 && value < 0x0100
    }

    static func lastErrorString(_ status: ipp_status_t) -> String {
        if let text = cupsLastErrorString() {
            return String(cString: text)
        }
        return name(status)
    }

    /// Why connecting to the domain socket `path` fails, e.g. "no socket at PATH"
    /// or "nobody listens on PATH (Connection refused)".
    static func domainSocketProblem(_ path: String) -> String {
        var info = stat()
        if stat(path, &info) != 0 {
            return "no socket at \(path) (\(String(cString: strerror(errno))))"
        }
        if (info.st_mode & S_IFMT) != S_IFSOCK {
            return "\(path) is not a socket"
        }
        let error = connectErrno(path)
        if error == 0 {
            return "\(path) accepted a connection, but libcups could not connect"
        }
        if error == ECONNREFUSED {
            return "nobody listens on \(path) (\(String(cString: strerror(error))); a stale socket of a stopped cupsd?)"
        }
        return "cannot connect to \(path) (\(String(cString: strerror(error))))"
    }

    /// errno of connect(2) to the domain socket `path`, 0 on success.
    static func connectErrno(_ path: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return ENAMETOOLONG }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddrPointer in
                connect(fd, sockaddrPointer, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0 ? 0 : errno
    }
}
