import CSystem
import Glibc
import Synchronization

/// A folder the service opened itself. Every file it creates, opens or moves
/// is named relative to such a descriptor, so a path swapped for a symlink after
/// the folder was opened cannot redirect the operation.
public final class Directory: @unchecked Sendable {
    public let descriptor: FileDescriptor
    public var path: String { descriptor.path }
    /// The open folder's device and inode, looked up once (they cannot change).
    private let identityCache = Mutex<Identity?>(nil)

    public struct Identity: Equatable, Sendable {
        public var device: UInt64
        public var inode: UInt64
    }

    /// Which folder this is: a folder made anew at the same path is another one.
    public func identity() throws(SystemError) -> Identity {
        if let known = identityCache.withLock({ $0 }) { return known }
        let st = try descriptor.stat()
        let identity = Identity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
        identityCache.withLock { $0 = identity }
        return identity
    }

    /// The device of the file system the folder is on (what `syncfs` syncs).
    public func device() throws(SystemError) -> UInt64 { try identity().device }

    /// Opens `path`; a symlink as its last component is refused unless
    /// `followingLink` (for a link the administrator configured).
    public init(path: String, followingLink: Bool = false) throws(SystemError) {
        let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (followingLink ? 0 : O_NOFOLLOW))
        guard fd >= 0 else { throw SystemError("open folder", path: path) }
        descriptor = FileDescriptor(adopting: fd, path: path)
    }

    private init(descriptor: FileDescriptor) { self.descriptor = descriptor }

    /// Opens a folder that may not exist yet, creating the missing components.
    public static func create(path: String, mode: mode_t = 0o777, followingLink: Bool = false) throws(SystemError) -> Directory {
        if let existing = try? Directory(path: path, followingLink: followingLink) { return existing }
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, mode) != 0 && Glibc.errno != EEXIST {
                throw SystemError("create folder", path: prefix)
            }
        }
        return try Directory(path: path, followingLink: followingLink)
    }

    public func child(_ name: String) -> String { path.hasSuffix("/") ? path + name : path + "/" + name }

    private func checked(_ name: String) throws(SystemError) {
        // Bytes, not Foundation's substring search: this runs for every file operation.
        if name.isEmpty || name.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == 0 }) || name == "." || name == ".." {
            throw SystemError("use name", path: child(name), errno: EINVAL)
        }
    }

    /// Opens (and creates, if missing) a subfolder without following a symlink.
    public func subdirectory(_ name: String, create: Bool = false, mode: mode_t = 0o777) throws(SystemError) -> Directory {
        try checked(name)
        if create, mkdirat(descriptor.rawValue, name, mode) != 0, Glibc.errno != EEXIST {
            throw SystemError("create folder", path: child(name))
        }
        let fd = openat(descriptor.rawValue, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw SystemError("open folder", path: child(name)) }
        return Directory(descriptor: FileDescriptor(adopting: fd, path: child(name)))
    }

    /// Opens a folder below this one, one component at a time, none of them
    /// followed if it is a symlink (a subfolder of a drop folder swapped for a
    /// link to /etc cannot redirect the service).
    public func descend(_ relativePath: String) throws(SystemError) -> Directory {
        var current = self
        for component in relativePath.split(separator: "/") where !component.isEmpty {
            current = try current.subdirectory(String(component))
        }
        return current
    }

    /// Opens a file for reading without following symlinks and without blocking
    /// on a FIFO; the caller checks the type on the returned descriptor.
    public func openForReading(_ name: String) throws(SystemError) -> FileDescriptor {
        try checked(name)
        let fd = openat(descriptor.rawValue, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw SystemError("open", path: child(name)) }
        let file = FileDescriptor(adopting: fd, path: child(name))
        // Back to blocking reads for regular files. F_SETFL changes only the
        // status flags, and O_NONBLOCK is the one this open set.
        _ = fcntl(fd, F_SETFL, 0)
        return file
    }

    /// Creates a new file that must not exist yet; the process umask decides
    /// the final mode (outputs never copy the input's permissions).
    public func createFile(_ name: String, mode: mode_t = 0o666) throws(SystemError) -> FileDescriptor {
        try checked(name)
        let fd = openat(descriptor.rawValue, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        guard fd >= 0 else { throw SystemError("create", path: child(name)) }
        return FileDescriptor(adopting: fd, path: child(name))
    }

    /// Opens a file for appending, creating it when missing.
    public func openForAppending(_ name: String, mode: mode_t = 0o640) throws(SystemError) -> FileDescriptor {
        try checked(name)
        let fd = openat(descriptor.rawValue, name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, mode)
        guard fd >= 0 else { throw SystemError("open", path: child(name)) }
        return FileDescriptor(adopting: fd, path: child(name))
    }

    /// Opens a file for writing in place (not appending), creating it when missing.
    public func openForWriting(_ name: String, mode: mode_t = 0o640) throws(SystemError) -> FileDescriptor {
        try checked(name)
        let fd = openat(descriptor.rawValue, name, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode)
        guard fd >= 0 else { throw SystemError("open", path: child(name)) }
        return FileDescriptor(adopting: fd, path: child(name))
    }

    public func status(_ name: String) throws(SystemError) -> Glibc.stat {
        try checked(name)
        var st = Glibc.stat()
        guard fstatat(descriptor.rawValue, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else {
            throw SystemError("stat", path: child(name))
        }
        return st
    }

    public func exists(_ name: String) -> Bool { (try? status(name)) != nil }

    public enum RenameMode: Sendable { case replace, noReplace }

    /// Atomically moves `name` to `target`/`newName`. With `.noReplace` an existing
    /// target makes it fail with EEXIST instead of being overwritten.
    public func move(_ name: String, to target: Directory, as newName: String, mode: RenameMode = .noReplace) throws(SystemError) {
        try checked(name)
        try target.checked(newName)
        let flags: UInt32 = mode == .noReplace ? UInt32(HF_RENAME_NOREPLACE) : 0
        if hf_renameat2(descriptor.rawValue, name, target.descriptor.rawValue, newName, flags) != 0 {
            let e = Glibc.errno
            // Some network file systems do not know RENAME_NOREPLACE: link + unlink
            // gives the same no-overwrite guarantee there.
            if mode == .noReplace && (e == EINVAL || e == ENOSYS) {
                guard linkat(descriptor.rawValue, name, target.descriptor.rawValue, newName, 0) == 0 else {
                    throw SystemError("move to \(target.child(newName))", path: child(name))
                }
                _ = unlinkat(descriptor.rawValue, name, 0)
                return
            }
            throw SystemError("move to \(target.child(newName))", path: child(name), errno: e)
        }
    }

    /// `move`, and where `target` is on another file system (a done/ or
    /// failed/ folder on another disk): a copy under a hidden name there,
    /// synced, renamed to `newName`, then the source removed. A crash leaves
    /// the source in place (and at worst a hidden copy or a second copy),
    /// never neither.
    public func relocate(_ name: String, to target: Directory, as newName: String, mode: RenameMode = .noReplace) throws(SystemError) {
        do {
            try move(name, to: target, as: newName, mode: mode)
            return
        } catch {
            guard error.errno == EXDEV else { throw error }
        }
        let temporary = try copyAcross(name, to: target)
        do {
            try target.move(temporary, to: target, as: newName, mode: mode)
        } catch {
            try? target.remove(temporary)
            throw error
        }
        finishMoveAcross(name, to: target)
    }

    /// The first half of a move to another file system: `name` copied into
    /// `target` under a hidden temporary name (returned), with its permission
    /// bits and times, and synced.
    func copyAcross(_ name: String, to target: Directory) throws(SystemError) -> String {
        let input = try openForReading(name)
        let st = try input.stat()
        let temporary = ".hf-move-\(UInt64.random(in: 0...UInt64.max)).tmp"
        let copy = try target.createFile(temporary, mode: st.st_mode & 0o777)
        do {
            try copy.copyContents(of: input)
            try copy.setTimes(as: st)
            try copy.sync()
        } catch {
            try? target.remove(temporary)
            throw error
        }
        return temporary
    }

    /// The second half, once the copy has its final name: that name made
    /// durable, then the source removed. The move has happened by now: a
    /// failure here leaves a source behind (removed with its job), and is
    /// not reported as a failed move, which would be retried as a second copy.
    func finishMoveAcross(_ name: String, to target: Directory) {
        try? target.sync()
        try? remove(name)
    }

    public func remove(_ name: String) throws(SystemError) {
        try checked(name)
        guard unlinkat(descriptor.rawValue, name, 0) == 0 else { throw SystemError("remove", path: child(name)) }
    }

    public func removeDirectory(_ name: String) throws(SystemError) {
        try checked(name)
        guard unlinkat(descriptor.rawValue, name, AT_REMOVEDIR) == 0 else { throw SystemError("remove folder", path: child(name)) }
    }

    /// Removes a folder and everything in it (the service's own job folders only).
    public func removeTree(_ name: String) throws(SystemError) {
        let sub = try subdirectory(name)
        for entry in try sub.entries() {
            if entry.isDirectory { try sub.removeTree(entry.name) } else { try sub.remove(entry.name) }
        }
        try removeDirectory(name)
    }

    public func sync() throws(SystemError) { try descriptor.sync() }

    public struct Entry: Sendable, Hashable {
        public let name: String
        public let type: UInt8
        /// The name's bytes on disk; `name` is their (lossy) UTF-8 reading.
        public var rawName: [UInt8] = []
        /// False for a name that is not UTF-8 (Latin-1 from an old client):
        /// `name` does not reach the file; see `repairName`.
        public var hasValidName: Bool { rawName.isEmpty || String(validating: rawName, as: UTF8.self) != nil }
        public var isDirectory: Bool { Int(type) == Int(DT_DIR) }
        public var isSymlink: Bool { Int(type) == Int(DT_LNK) }
    }

    /// Renames a file whose name is not UTF-8 to the Latin-1 reading of its
    /// bytes (never over an existing file), so that it can be named from Swift.
    @discardableResult
    public func repairName(_ raw: [UInt8]) throws(SystemError) -> String {
        let readable = String(String.UnicodeScalarView(raw.map { Unicode.Scalar($0) }))
        var n = 1
        while true {
            let candidate = n == 1 ? readable : FileNameSanitizer.numbered(readable, n)
            let rc = (raw + [0]).withUnsafeBufferPointer { old in
                old.withMemoryRebound(to: CChar.self) {
                    hf_renameat2(descriptor.rawValue, $0.baseAddress, descriptor.rawValue, candidate, UInt32(HF_RENAME_NOREPLACE))
                }
            }
            if rc == 0 { return candidate }
            guard Glibc.errno == EEXIST, n < 1000 else { throw SystemError("rename to \(candidate) (the name was not UTF-8)", path: child(readable)) }
            n += 1
        }
    }

    public func entries() throws(SystemError) -> [Entry] {
        let fd = openat(descriptor.rawValue, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0, let dir = fdopendir(fd) else {
            if fd >= 0 { _ = Glibc.close(fd) }
            throw SystemError("list", path: path)
        }
        defer { closedir(dir) }
        var result: [Entry] = []
        while let entry = readdir(dir) {
            let rawName = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix(while: { $0 != 0 })) }
            let name = String(decoding: rawName, as: UTF8.self)
            if name == "." || name == ".." { continue }
            var type = entry.pointee.d_type
            if Int(type) == Int(DT_UNKNOWN), let st = try? status(name) {
                type = (st.st_mode & S_IFMT) == S_IFDIR ? UInt8(DT_DIR) : ((st.st_mode & S_IFMT) == S_IFLNK ? UInt8(DT_LNK) : UInt8(DT_REG))
            }
            result.append(Entry(name: name, type: type, rawName: rawName))
        }
        return result
    }
}
