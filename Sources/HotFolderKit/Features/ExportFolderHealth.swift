import Foundation
import Glibc
import Synchronization

/// The export folder as a feature source: it exists (or can be made), is a
/// folder, is writable by the service and has at least `export.min-free` free.
final class ExportFolderHealth: ProbedSource, @unchecked Sendable {
    let path: String
    let minFree: Int64
    /// When the folder last said yes (monotonic seconds).
    private let lastYes = Mutex<Double?>(nil)
    /// How long a yes is taken as it is. Asked for every document, the
    /// folder's stat, access and statvfs were a tenth of the service's system
    /// calls in a burst; a folder that breaks within this time fails the
    /// export itself, which waits and retries just the same.
    static let yesHolds = 1.0

    init(path: String, minFree: Int64) {
        self.path = path
        self.minFree = minFree
        super.init(sourceName: "export folder", maxDelay: 30)
    }

    override func probe() -> Availability {
        let now = Self.monotonic()
        if let yes = lastYes.withLock({ $0 }), now - yes < Self.yesHolds { return .available }
        let answer = ask()
        lastYes.withLock { $0 = answer == .available ? now : nil }
        return answer
    }

    private static func monotonic() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    private func ask() -> Availability {
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
