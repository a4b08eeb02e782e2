import Glibc

/// An operating-system call that failed: which call, on which file, and errno.
public struct SystemError: Error, Sendable, CustomStringConvertible, Equatable {
    public let operation: String
    public let path: String
    public let errno: Int32

    public init(_ operation: String, path: String, errno: Int32 = Glibc.errno) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    public var reason: String { String(cString: strerror(errno)) }

    public var description: String { "\(operation) \(path): \(reason) (errno \(errno))" }

    /// Faults that may go away by themselves (space, quota, permissions that an
    /// administrator fixes, a share that comes back).
    public var isTransient: Bool {
        [ENOSPC, EDQUOT, EACCES, EPERM, EROFS, ENOENT, EIO, ESTALE, EAGAIN, EBUSY, ETIMEDOUT, EHOSTDOWN, ENOTCONN].contains(errno)
    }
}
