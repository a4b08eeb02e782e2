import Foundation
import Glibc

/// One document for a worker: everything the pipeline needs, self-contained,
/// so a worker never reads the configuration file (which may have changed).
public struct GenerationRequest: Sendable, Codable {
    public var folder: FolderConfiguration
    public var jobDirectory: String
    public var originalName: String
    public var now: Double
    public var number: Int?
}

public enum GenerationResponse: Sendable, Codable {
    case result(PipelineResult)
    case failure(JobFailure)
}

/// Length-prefixed JSON frames over a pipe: 4 bytes big-endian length, then JSON.
enum Frame {
    static let maximum = 64 << 20

    static func write<T: Encodable>(_ value: T, to fd: Int32) -> Bool {
        guard let body = try? JSONEncoder().encode(value), body.count <= maximum else { return false }
        let n = UInt32(body.count)
        let bytes = [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)] + Array(body)
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

    /// Reads one frame; `deadline` nil waits for ever.
    static func read<T: Decodable>(_ type: T.Type, from fd: Int32, deadline: Date?) -> ReadResult<T> {
        var header = [UInt8](repeating: 0, count: 4)
        switch readExactly(&header, fd: fd, deadline: deadline) {
        case .value: break
        case .endOfFile: return .endOfFile
        case .timedOut: return .timedOut
        case .broken(let m): return .broken(m)
        }
        let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        guard length <= maximum else { return .broken("frame of \(length) bytes") }
        var body = [UInt8](repeating: 0, count: length)
        switch readExactly(&body, fd: fd, deadline: deadline) {
        case .value: break
        case .endOfFile: return .broken("worker closed its output mid-answer")
        case .timedOut: return .timedOut
        case .broken(let m): return .broken(m)
        }
        do {
            return .value(try JSONDecoder().decode(T.self, from: Data(body)))
        } catch {
            return .broken("unreadable answer: \(error)")
        }
    }

    private static func readExactly(_ buffer: inout [UInt8], fd: Int32, deadline: Date?) -> ReadResult<Void> {
        var filled = 0
        while filled < buffer.count {
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
            if n == 0 { return filled == 0 ? .endOfFile : .broken("truncated frame") }
            filled += n
        }
        return .value(())
    }
}
