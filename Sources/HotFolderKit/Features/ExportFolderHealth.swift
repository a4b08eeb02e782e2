import Foundation
import Glibc

/// The export folder as a feature source: it exists (or can be made), is a
/// folder, is writable by the service and has at least `export.min-free` free.
final class ExportFolderHealth: ProbedSource, @unchecked Sendable {
    let path: String
    let minFree: Int64

    init(path: String, minFree: Int64) {
        self.path = path
        self.minFree = minFree
        super.init(sourceName: "export folder", maxDelay: 30)
    }

    override func probe() -> Availability {
        var st = stat()
        // Where the space is measured: the folder, or where it will be made.
        var measured = path
        if stat(path, &st) != 0 {
            let e = errno
            guard e == ENOENT else {
                return .unavailable("the export folder \(path) cannot be reached: \(String(cString: strerror(e))); check the path (a dangling link or an unmounted share?)")
            }
            // The service makes a missing export folder, if its parent lets it.
            let parent = (path as NSString).deletingLastPathComponent
            guard access(parent, W_OK | X_OK) == 0 else {
                return .unavailable("the export folder \(path) does not exist and cannot be created in \(parent) (\(String(cString: strerror(errno)))); create it or mount its share")
            }
            measured = parent
        } else {
            guard (st.st_mode & S_IFMT) == S_IFDIR else {
                return .unavailable("\(path) is not a folder; remove what is there so the export folder can be made, or correct export.to")
            }
            guard access(path, W_OK | X_OK) == 0 else {
                return .unavailable("the export folder \(path) is not writable by the service (\(String(cString: strerror(errno)))); grant the service's user write access")
            }
        }
        if minFree > 0 {
            var fs = statvfs()
            if statvfs(measured, &fs) == 0 {
                let free = Int64(fs.f_bavail) * Int64(fs.f_frsize)
                if free < minFree {
                    return .unavailable("the export folder \(path) has only \(Pipeline.bytes(free)) free, less than export.min-free (\(Pipeline.bytes(minFree))); free some space")
                }
            }
        }
        return .available
    }
}
