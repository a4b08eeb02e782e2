import CSystem
import Glibc

/// An owned file descriptor, closed when the last reference goes.
public final class FileDescriptor: @unchecked Sendable {
    // Immutable after init; close happens once, in deinit.
    public let rawValue: Int32
    public let path: String

    public init(adopting fd: Int32, path: String) {
        self.rawValue = fd
        self.path = path
    }

    deinit { _ = Glibc.close(rawValue) }

    public func stat() throws(SystemError) -> Glibc.stat {
        var st = Glibc.stat()
        guard fstat(rawValue, &st) == 0 else { throw SystemError("fstat", path: path) }
        return st
    }

    /// Gives the file the access and modification times of `other` (a copy that stands for a moved file).
    public func setTimes(as other: Glibc.stat) throws(SystemError) {
        var times = [other.st_atim, other.st_mtim]
        guard futimens(rawValue, &times) == 0 else { throw SystemError("futimens", path: path) }
    }

    public func sync() throws(SystemError) {
        guard fsync(rawValue) == 0 else { throw SystemError("fsync", path: path) }
    }

    /// Reads up to `count` bytes from the start of the file.
    public func readPrefix(_ count: Int) throws(SystemError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = buffer.withUnsafeMutableBytes { raw in
                pread(rawValue, raw.baseAddress.map { $0 + filled }, count - filled, off_t(filled))
            }
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                throw SystemError("read", path: path)
            }
            if n == 0 { break }
            filled += n
        }
        return Array(buffer.prefix(filled))
    }

    public func readAll(limit: Int = 64 << 20) throws(SystemError) -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        var offset = 0
        while result.count < limit {
            let n = chunk.withUnsafeMutableBytes { pread(rawValue, $0.baseAddress, $0.count, off_t(offset)) }
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                throw SystemError("read", path: path)
            }
            if n == 0 { break }
            result.append(contentsOf: chunk[0..<n])
            offset += n
        }
        return result
    }

    public func write(_ bytes: [UInt8]) throws(SystemError) {
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(rawValue, $0.baseAddress.map { $0 + written }, bytes.count - written) }
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                throw SystemError("write", path: path)
            }
            written += n
        }
    }

    /// Copies the whole content of `source` (from offset 0) to this descriptor.
    public func copyContents(of source: FileDescriptor) throws(SystemError) {
        let size = try source.stat().st_size
        var offset = off_t(0)
        while offset < size {
            let n = hf_copy_file_range(source.rawValue, &offset, rawValue, Int(size - offset))
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                if Glibc.errno == EXDEV || Glibc.errno == ENOSYS || Glibc.errno == EINVAL {
                    try copyByReading(source, from: offset, size: size)
                    return
                }
                throw SystemError("copy", path: path)
            }
            if n == 0 { break }
        }
    }

    private func copyByReading(_ source: FileDescriptor, from start: off_t, size: off_t) throws(SystemError) {
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var offset = start
        while offset < size {
            let n = chunk.withUnsafeMutableBytes { pread(source.rawValue, $0.baseAddress, $0.count, offset) }
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                throw SystemError("read", path: source.path)
            }
            if n == 0 { break }
            try write(Array(chunk[0..<n]))
            offset += off_t(n)
        }
    }
}
