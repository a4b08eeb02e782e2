import Glibc

/// A local file opened for submission: read errors are reported before any job exists.
final class LocalDocument {
    let path: String
    let fd: Int32
    let size: Int64
    /// "application/pdf" when the file starts with "%PDF-", otherwise
    /// "application/octet-stream", which makes cupsd type it automatically.
    let format: String

    init(path: String) throws {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.error(path, errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let error = errno
            close(fd)
            throw Self.error(path, error)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            let error = (info.st_mode & S_IFMT) == S_IFDIR ? EISDIR : EINVAL
            throw CUPSError.localFile(path: path, errno: error, message: "not a regular file")
        }
        var magic = [UInt8](repeating: 0, count: 5)
        let count = magic.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else {
            let error = errno
            close(fd)
            throw Self.error(path, error)
        }
        self.fd = fd
        self.size = Int64(info.st_size)
        self.format = count == 5 && magic == Array("%PDF-".utf8) ? "application/pdf" : "application/octet-stream"
    }

    deinit {
        close(fd)
    }

    /// The file name, for document-name.
    var name: String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// Calls `body` with successive chunks of the file from its start.
    func forEachChunk(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard lseek(fd, 0, SEEK_SET) == 0 else { throw Self.error(path, errno) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Self.error(path, errno)
            }
            if count == 0 { return }
            try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
    }

    static func error(_ path: String, _ code: Int32) -> CUPSError {
        .localFile(path: path, errno: code, message: String(cString: strerror(code)))
    }
}
