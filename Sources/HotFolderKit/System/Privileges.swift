import Glibc

/// Dropping root: a print station often starts the service as root, but the
/// service needs no privilege to read, move and print its folders' files.
public enum Privileges {
    /// Becomes `user` (with its primary and supplementary groups) when running
    /// as root. Returns a warning to log when running as root without a user.
    public static func drop(to user: String?) throws(SystemError) -> String? {
        guard geteuid() == 0 else { return nil }
        guard let user else {
            return "running as root; set [service] user = NAME to run as a dedicated user with access to the configured folders only"
        }
        guard let entry = getpwnam(user) else {
            throw SystemError("look up user", path: user, errno: errno == 0 ? ENOENT : errno)
        }
        let uid = entry.pointee.pw_uid
        let gid = entry.pointee.pw_gid
        guard initgroups(user, gid) == 0 else { throw SystemError("initgroups", path: user) }
        guard setgid(gid) == 0 else { throw SystemError("setgid", path: user) }
        guard setuid(uid) == 0 else { throw SystemError("setuid", path: user) }
        // Regaining root must be impossible now.
        if setuid(0) == 0 { throw SystemError("drop root (setuid(0) still succeeds)", path: user, errno: EPERM) }
        return nil
    }
}
