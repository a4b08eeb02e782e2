import CInotifyTools
import Foundation
import Glibc
import Synchronization

/// The one owner of libinotifytools in this process. The library keeps
/// process-wide state and is not thread-safe, so every call into it happens on
/// the hub's own thread; other threads post commands and wake it through an
/// event in a private control folder.
public final class InotifyHub: @unchecked Sendable {
    public static let shared = InotifyHub()

    public struct Registration: Sendable {
        public let root: String
        public let recursive: Bool
        /// Absolute paths never watched (the service's own folders).
        public let excluded: [String]
        public let rules: IgnoreRules
        public let sink: WatchSink
    }

    private enum Command {
        case add(Int, Registration)
        case remove(Int)
        case rescan(Int)
    }

    private struct Started {
        var commands: [Command] = []
        var nextID = 1
        var running = false
        var controlDirectory = ""
        /// inotify could not be set up: wakes go through `failedWake`.
        var failed = false
    }

    private let shared = Mutex(Started())
    private let failedWake = DispatchSemaphore(value: 0)

    // Only touched on the hub thread.
    private var registrations: [Int: Registration] = [:]
    private var watches: [Int32: (ids: Set<Int>, path: String)] = [:]
    private var controlWD: Int32 = -1
    private var setupError: String?

    private static let fileEvents = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MODIFY | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW | IN_ONLYDIR)

    private init() {}

    /// Starts watching `registration.root`; the sink first receives an
    /// `.appeared` for every file already there. Returns a token for `remove`.
    public func add(_ registration: Registration) -> Int {
        let id = shared.withLock { state -> Int in
            let id = state.nextID
            state.nextID += 1
            state.commands.append(.add(id, registration))
            return id
        }
        startIfNeeded()
        wake()
        return id
    }

    public func remove(_ id: Int) {
        shared.withLock { $0.commands.append(.remove(id)) }
        wake()
    }

    /// A full scan of the registration's tree (after an overflow, on a timer).
    public func rescan(_ id: Int) {
        shared.withLock { $0.commands.append(.rescan(id)) }
        wake()
    }

    private func startIfNeeded() {
        let mustStart = shared.withLock { state -> Bool in
            if state.running { return false }
            state.running = true
            // TMPDIR when set and usable, else /tmp.
            let tmp = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 }
            for folder in [tmp, "/tmp"].compactMap({ $0 }) where state.controlDirectory.isEmpty {
                var template = Array((folder + "/hotfolder-inotify-XXXXXX").utf8CString)
                let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }
                state.controlDirectory = made.map { String(cString: $0) } ?? ""
            }
            return true
        }
        guard mustStart else { return }
        // The folder is empty between wakes; without this every start of the
        // service left one in /tmp. (A killed process still leaves its own.)
        atexit { InotifyHub.shared.removeControlDirectory() }
        let semaphore = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            self.setUp()
            semaphore.signal()
            self.loop()
        }
        thread.name = "inotify"
        thread.start()
        semaphore.wait()
    }

    private func removeControlDirectory() {
        let dir = shared.withLock { $0.controlDirectory }
        if !dir.isEmpty { rmdir(dir) }
    }

    private func wake() {
        let (dir, failed) = shared.withLock { ($0.controlDirectory, $0.failed) }
        if failed {
            failedWake.signal()
            return
        }
        guard !dir.isEmpty else { return }
        let path = dir + "/wake-\(UInt64.random(in: 0...UInt64.max))"
        let fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
        if fd >= 0 {
            close(fd)
            unlink(path)
        }
    }

    // MARK: - hub thread

    private func setUp() {
        if inotifytools_initialize() == 0 {
            let e = inotifytools_error()
            setupError = "cannot start inotify: " + (e == EMFILE
                ? "the limit of inotify instances is reached (raise it with `sysctl fs.inotify.max_user_instances=1024`, and in /etc/sysctl.d to keep it)"
                : String(cString: strerror(e)))
        } else {
            let dir = shared.withLock { $0.controlDirectory }
            if inotifytools_watch_file(dir, Int32(IN_CREATE)) == 1 {
                controlWD = wd(for: dir)
                return
            }
            setupError = "cannot watch the control folder \(dir): \(Self.reason(inotifytools_error()))"
        }
        shared.withLock { $0.failed = true }
    }

    /// Why inotify refused a watch, with the remedy where there is one.
    private static func reason(_ e: Int32) -> String {
        e == ENOSPC
            ? "the inotify watch limit is reached (raise it with `sysctl fs.inotify.max_user_watches=524288`, and in /etc/sysctl.d to keep it)"
            : String(cString: strerror(e))
    }

    private func loop() {
        while true {
            runCommands()
            if setupError != nil {
                // No inotify: every folder is told so (and polled instead);
                // only commands come, through `failedWake`.
                failedWake.wait()
                continue
            }
            guard let event = inotifytools_next_event(-1) else {
                let e = inotifytools_error()
                if e != 0 && e != EINTR {
                    broadcastProblem("reading inotify events failed: \(String(cString: strerror(e)))")
                    // Avoid a hot loop on a persistent error while staying responsive.
                    usleep(100_000)
                }
                continue
            }
            handle(event)
        }
    }

    private func runCommands() {
        let commands = shared.withLock { state -> [Command] in
            defer { state.commands.removeAll() }
            return state.commands
        }
        for command in commands {
            switch command {
            case .add(let id, let registration):
                registrations[id] = registration
                if let setupError {
                    registration.sink.receive(.cannotWatch(path: registration.root, reason: setupError))
                    continue
                }
                addTree(registration.root, id: id, isRoot: true)
            case .remove(let id):
                registrations[id] = nil
                for (wd, entry) in watches where entry.ids.contains(id) {
                    var ids = entry.ids
                    ids.remove(id)
                    if ids.isEmpty {
                        _ = inotifytools_remove_watch_by_wd(wd)
                        watches[wd] = nil
                    } else {
                        watches[wd] = (ids, entry.path)
                    }
                }
            case .rescan(let id):
                guard let registration = registrations[id] else { continue }
                addTree(registration.root, id: id, isRoot: true)
            }
        }
    }

    private func wd(for path: String) -> Int32 {
        let wd = inotifytools_wd_from_filename(path + "/")
        return wd > 0 ? wd : inotifytools_wd_from_filename(path)
    }

    /// Watches `path` (and, when recursive, its subfolders) and then lists it,
    /// so files that arrived before the watch existed are not missed.
    private func addTree(_ path: String, id: Int, isRoot: Bool) {
        guard let registration = registrations[id] else { return }
        if inotifytools_watch_file(path, Int32(Self.fileEvents)) != 1 {
            let e = inotifytools_error()
            if isRoot && (e == ENOENT || e == ENOTDIR) {
                registration.sink.receive(.folderGone(path: path))
                return
            }
            if e == ENOENT || e == ENOTDIR { return } // a subfolder gone already
            guard e == ENOSPC || e == ENOMEM else {
                // This folder's own trouble (a subfolder it may not read): said, and left.
                registration.sink.problem("cannot watch \(path): \(String(cString: strerror(e)))")
                return
            }
            // inotify's limits: no folder of the tree may get events. Files
            // already there are still found; new ones would not be.
            scan(path, id: id, registration: registration)
            registration.sink.receive(.cannotWatch(path: path, reason: Self.reason(e)))
            return
        }
        let wd = wd(for: path)
        if wd > 0 {
            var entry = watches[wd] ?? (ids: [], path: path)
            entry.ids.insert(id)
            entry.path = path
            watches[wd] = entry
        }
        scan(path, id: id, registration: registration)
    }

    private func scan(_ path: String, id: Int, registration: Registration) {
        guard let directory = try? Directory(path: path), let entries = try? directory.entries() else { return }
        for entry in entries {
            let child = directory.child(entry.name)
            if entry.isDirectory {
                if registration.recursive && isWatchable(folder: entry.name, path: child, registration) {
                    addTree(child, id: id, isRoot: false)
                }
            } else if !entry.hasValidName {
                // The rename's IN_MOVED_TO brings it back under a name Swift can use.
                do { try directory.repairName(entry.rawName) } catch { registration.sink.problem("\(error)") }
            } else if registration.rules.reasonToSkip(file: entry.name) == nil {
                registration.sink.receive(.appeared(directory: path, name: entry.name))
            }
        }
    }

    private func isWatchable(folder name: String, path: String, _ registration: Registration) -> Bool {
        !registration.rules.skipsFolder(name) && !registration.excluded.contains(path)
    }

    private func handle(_ event: UnsafeMutablePointer<inotify_event>) {
        let mask = event.pointee.mask
        let wd = event.pointee.wd
        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
            for (id, registration) in registrations {
                registration.sink.receive(.overflow)
                addTree(registration.root, id: id, isRoot: true)
            }
            return
        }
        if wd == controlWD { return }
        guard let entry = watches[wd] else { return }
        let raw = Self.rawName(of: event)
        let name = String(decoding: raw, as: UTF8.self)
        if String(validating: raw, as: UTF8.self) == nil {
            // Not UTF-8: renamed in place once complete; the rename's IN_MOVED_TO follows.
            if mask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO) != 0, mask & UInt32(IN_ISDIR) == 0 {
                do { try Directory(path: entry.path).repairName(raw) } catch {
                    for id in entry.ids { registrations[id]?.sink.problem("\(error)") }
                }
            }
            return
        }
        if mask & UInt32(IN_IGNORED) != 0 || mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
            // The watch is gone with its folder; a root that goes is reported
            // and retried by the folder's owner.
            if mask & UInt32(IN_IGNORED) != 0 { watches[wd] = nil }
            for id in entry.ids {
                if let registration = registrations[id], registration.root == entry.path, mask & UInt32(IN_IGNORED) == 0 {
                    registration.sink.receive(.folderGone(path: entry.path))
                }
            }
            return
        }
        guard !name.isEmpty else { return }
        for id in entry.ids {
            guard let registration = registrations[id] else { continue }
            if mask & UInt32(IN_ISDIR) != 0 {
                let child = entry.path + "/" + name
                if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0, registration.recursive, isWatchable(folder: name, path: child, registration) {
                    addTree(child, id: id, isRoot: false)
                }
                continue
            }
            if registration.rules.reasonToSkip(file: name) != nil { continue }
            let directory = entry.path
            if mask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO) != 0 {
                registration.sink.receive(.written(directory: directory, name: name))
            } else if mask & UInt32(IN_MODIFY) != 0 {
                registration.sink.receive(.modified(directory: directory, name: name))
            } else if mask & UInt32(IN_CREATE) != 0 {
                registration.sink.receive(.created(directory: directory, name: name))
            } else if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 {
                registration.sink.receive(.removed(directory: directory, name: name))
            }
        }
    }

    private func broadcastProblem(_ message: String) {
        for registration in registrations.values { registration.sink.problem(message) }
    }

    private static func rawName(of event: UnsafeMutablePointer<inotify_event>) -> [UInt8] {
        let length = Int(event.pointee.len)
        guard length > 0 else { return [] }
        let start = UnsafeRawPointer(event).advanced(by: MemoryLayout<inotify_event>.size)
        return Array(UnsafeRawBufferPointer(start: start, count: length).prefix { $0 != 0 })
    }
}
