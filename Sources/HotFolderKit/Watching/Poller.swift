import CSystem
import Foundation
import Glibc

/// Watches a folder by listing it at an interval, for file systems where inotify
/// sees no writes made by other machines (NFS, SMB/CIFS, FUSE, …). A file is
/// handed to the settler only once its size and mtime were the same on two
/// polls in a row; the settler then waits `settle` on top of that.
final class Poller: @unchecked Sendable {
    private struct Seen {
        var size: Int64
        var mtime: Int64
        var announced: Bool
    }

    let root: String
    let recursive: Bool
    let excluded: Set<String>
    let rules: IgnoreRules
    let interval: Double
    private let sink: WatchSink
    private let queue: DispatchQueue
    private var timer: DispatchSourceTimer?
    // Only touched on `queue`.
    private var seen: [String: Seen] = [:]
    private var rootWasMissing = false

    init(root: String, recursive: Bool, excluded: [String], rules: IgnoreRules, interval: Double, sink: WatchSink) {
        self.root = root
        self.recursive = recursive
        self.excluded = Set(excluded)
        self.rules = rules
        self.interval = interval
        self.sink = sink
        self.queue = DispatchQueue(label: "poll.\(root)")
    }

    func start() {
        queue.async { [self] in
            let t = DispatchSource.makeTimerSource(queue: queue)
            t.schedule(deadline: .now(), repeating: interval, leeway: .milliseconds(Int(interval * 100)))
            t.setEventHandler { [weak self] in self?.poll() }
            t.resume()
            timer = t
        }
    }

    func stop() {
        queue.sync {
            timer?.cancel()
            timer = nil
        }
    }

    /// Hands every stable file to the settler again at the next poll (after
    /// the service had to leave some in the folder).
    func announceAgain() {
        queue.async { [self] in
            for key in seen.keys { seen[key]?.announced = false }
        }
    }

    private func poll() {
        var current: [String: (Int64, Int64, String, String)] = [:]
        guard let top = try? Directory(path: root) else {
            if !rootWasMissing {
                rootWasMissing = true
                sink.receive(.folderGone(path: root))
            }
            return
        }
        rootWasMissing = false
        list(top, into: &current)
        for (path, (size, mtime, directory, name)) in current {
            if var old = seen[path] {
                if old.size == size && old.mtime == mtime {
                    if !old.announced {
                        old.announced = true
                        seen[path] = old
                        sink.receive(.appeared(directory: directory, name: name))
                    }
                } else {
                    seen[path] = Seen(size: size, mtime: mtime, announced: old.announced)
                    if old.announced { sink.receive(.modified(directory: directory, name: name)) }
                }
            } else {
                seen[path] = Seen(size: size, mtime: mtime, announced: false)
            }
        }
        for path in seen.keys where current[path] == nil {
            seen[path] = nil
            let directory = (path as NSString).deletingLastPathComponent
            sink.receive(.removed(directory: directory, name: (path as NSString).lastPathComponent))
        }
    }

    private func list(_ directory: Directory, into result: inout [String: (Int64, Int64, String, String)]) {
        guard let entries = try? directory.entries() else { return }
        for entry in entries {
            let path = directory.child(entry.name)
            if entry.isDirectory {
                if recursive, !rules.skipsFolder(entry.name), !excluded.contains(path),
                   let sub = try? directory.subdirectory(entry.name) {
                    list(sub, into: &result)
                }
                continue
            }
            guard entry.hasValidName else {
                _ = try? directory.repairName(entry.rawName) // seen under its new name at the next poll
                continue
            }
            guard rules.reasonToSkip(file: entry.name) == nil, let st = try? directory.status(entry.name) else { continue }
            let mtime = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
            result[path] = (Int64(st.st_size), mtime, directory.path, entry.name)
        }
    }

    /// File systems whose remote writes inotify does not see (statfs f_type).
    static let remoteFileSystems: [Int: String] = [
        0x6969: "NFS", 0x517B: "SMB", 0xFF53_4D42: "CIFS", 0xFE53_4D42: "SMB2", 0x6573_5546: "FUSE",
        0x00C3_6400: "Ceph", 0x0102_1997: "9P", 0x5346_414F: "AFS", 0x7375_7245: "Coda",
        0x0116_1970: "GFS2", 0x0BD0_0BD0: "Lustre", 0x564C: "NCP", 0x6B41_4653: "kAFS", 0x7461_636F: "OCFS2",
    ]

    /// The name of the remote file system `path` is on, nil for a local one.
    static func remoteFileSystem(at path: String) -> String? {
        let type = hf_filesystem_type(path)
        guard type >= 0 else { return nil }
        return remoteFileSystems[Int(UInt32(truncatingIfNeeded: type))]
    }
}
