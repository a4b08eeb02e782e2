import Foundation
import Glibc

/// One document for a worker: everything the pipeline needs, self-contained,
/// so a worker never reads the configuration file (which may have changed).
struct GenerationRequest: Sendable {
    /// The folder's configuration, sent only when it differs from the one this
    /// worker got last (it is most of a request's bytes, and the same for
    /// every document of a burst); nil: the last one.
    var folder: FolderConfiguration?
    /// The area's `jobs/` (its path, and which folder it is: a drop folder
    /// made anew has a new one at the same path), and the job's files in it.
    var jobsDirectory: String
    var jobsIdentity: Directory.Identity?
    var jobID: String
    var originalFile: String
    var originalName: String
    /// False when the job came without a ticket (no need to look for one).
    var mayHaveTicket: Bool
    var now: Double
    var number: Int?
}

enum GenerationResponse: Sendable {
    case result(PipelineResult)
    case failure(JobFailure)
}

extension GenerationRequest: CompactCodable {
    func encode(to w: inout CompactWriter) {
        // The configuration as JSON (Codable): rare, and its many types need
        // no compact form of their own.
        w.optional(folder.flatMap { try? JSONEncoder().encode($0) }) { $0.raw(Array($1)) }
        w.string(jobsDirectory)
        w.optional(jobsIdentity) { w, identity in
            w.unsigned(identity.device)
            w.unsigned(identity.inode)
        }
        w.string(jobID)
        w.string(originalFile)
        w.string(originalName)
        w.bool(mayHaveTicket)
        w.double(now)
        w.optional(number) { $0.int($1) }
    }

    init(from r: inout CompactReader) throws(CompactError) {
        if let json = try r.optional({ r throws(CompactError) in try r.raw() }) {
            do {
                folder = try JSONDecoder().decode(FolderConfiguration.self, from: Data(json))
            } catch {
                throw CompactError("unreadable folder configuration: \(error)")
            }
        } else {
            folder = nil
        }
        jobsDirectory = try r.string()
        jobsIdentity = try r.optional { r throws(CompactError) in Directory.Identity(device: try r.unsigned(), inode: try r.unsigned()) }
        jobID = try r.string()
        originalFile = try r.string()
        originalName = try r.string()
        mayHaveTicket = try r.bool()
        now = try r.double()
        number = try r.optional { r throws(CompactError) in try r.int() }
    }
}

extension GenerationResponse: CompactCodable {
    func encode(to w: inout CompactWriter) {
        switch self {
        case .result(let result):
            w.byte(1)
            w.value(result)
        case .failure(let failure):
            w.byte(2)
            w.value(failure)
        }
    }

    init(from r: inout CompactReader) throws(CompactError) {
        switch try r.byte() {
        case 1: self = .result(try r.value())
        case 2: self = .failure(try r.value())
        case let tag: throw CompactError("unknown answer \(tag)")
        }
    }
}

/// Length-prefixed frames over a pipe: 4 bytes big-endian length, then the
/// value in the compact encoding.
enum Frame {
    static let maximum = 64 << 20

    static func write<T: CompactCodable>(_ value: T, to fd: Int32) -> Bool {
        var w = CompactWriter(capacity: 512)
        // Room for the length, filled in below: one buffer, one write.
        for _ in 0..<4 { w.byte(0) }
        value.encode(to: &w)
        var bytes = w.bytes
        let body = bytes.count - 4
        guard body <= maximum else { return false }
        let n = UInt32(body)
        bytes[0] = UInt8(n >> 24)
        bytes[1] = UInt8((n >> 16) & 0xFF)
        bytes[2] = UInt8((n >> 8) & 0xFF)
        bytes[3] = UInt8(n & 0xFF)
        var written = 0
        while written < bytes.count {
            let r = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress.map { $0 + written }, bytes.count - written) }
            if r < 0 {
                if errno == EINTR { continue }
                return false
            }
            written += r
        }
        return true
    }

    enum ReadResult<T> {
        case value(T)
        case endOfFile
        case timedOut
        case broken(String)
    }

    /// Reads one frame; `deadline` nil waits for ever. Requests and answers
    /// alternate, so nothing follows a frame in the pipe: it is read in as few
    /// calls as it arrives in (usually one, the header with the body).
    static func read<T: CompactCodable>(_ type: T.Type, from fd: Int32, deadline: Date?) -> ReadResult<T> {
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        var filled = 0
        var needed = 4
        while filled < needed {
            if let deadline {
                let remaining = deadline.timeIntervalSinceNow
                if remaining <= 0 { return .timedOut }
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let r = poll(&p, 1, Int32(min(remaining * 1000, 60_000)) + 1)
                if r < 0 {
                    if errno == EINTR { continue }
                    return .broken(String(cString: strerror(errno)))
                }
                if r == 0 { continue }
            }
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress.map { $0 + filled }, $0.count - filled) }
            if n < 0 {
                if errno == EINTR { continue }
                return .broken(String(cString: strerror(errno)))
            }
            if n == 0 {
                return filled == 0 ? .endOfFile : .broken(filled < 4 ? "truncated frame" : "worker closed its output mid-answer")
            }
            filled += n
            if needed == 4 && filled >= 4 {
                let length = Int(buffer[0]) << 24 | Int(buffer[1]) << 16 | Int(buffer[2]) << 8 | Int(buffer[3])
                guard length <= maximum else { return .broken("frame of \(length) bytes") }
                needed = 4 + length
                if buffer.count < needed { buffer += [UInt8](repeating: 0, count: needed - buffer.count) }
            }
        }
        guard filled == needed else { return .broken("\(filled - needed) bytes after a frame") }
        do {
            return .value(try T(compactBytes: Array(buffer[4..<needed])))
        } catch {
            return .broken("unreadable answer: \(error)")
        }
    }
}
