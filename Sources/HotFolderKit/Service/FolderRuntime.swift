import Foundation
import Glibc
import Synchronization

/// A drop folder while the service runs: its opened folders, its settler and
/// its watch.
final class FolderRuntime: @unchecked Sendable {
    let config: FolderConfiguration
    let drop: Directory
    /// The instance's claimed jobs and their journal.
    let area: JobArea
    let settler: Settler
    let tickets: TicketDesk
    /// An output folder (done, failed, export) as this runtime knows it.
    private struct OutputFolder {
        /// Open while it is still the folder at its path.
        var directory: Directory?
        /// It was a symlink when first opened: the administrator's link, followed.
        var followsLink: Bool
        /// The open folder's device and inode, taken when it was opened (it
        /// is compared with the path's for every document).
        var identity: (dev: UInt64, ino: UInt64)?
    }

    private let outputs = Mutex<[String: OutputFolder]>([:])
    let hubToken = Mutex<Int?>(nil)
    /// Documents whose claim failed (shown as waiting until one succeeds).
    let claimFailures = Mutex<Set<String>>([])
    /// Set instead of a hub registration when the folder is polled.
    let poller = Mutex<Poller?>(nil)
    /// Set once when watching starts, cancelled when it stops.
    var rescanTimer: DispatchSourceTimer?
    /// Availability and waiting documents, for the log (once per change) and
    /// for `hotfolder status`.
    let status: StatusBoard

    /// The print destination's printer state, shared by the folder's jobs.
    let printer: PrinterAvailability?
    /// Each destination's availability: the AND of its sources (seed 002).
    let features: [DestinationKind: DestinationFeature]

    /// The {n} counter, persisted beside the jobs so numbers are not reused
    /// after a restart.
    private let counter: Mutex<(value: Int, file: FileDescriptor?)>

    /// Held while this instance serves the folder: a second service with the
    /// same instance name would resume the first one's jobs as its own.
    private let lock: FileDescriptor

    init(config: FolderConfiguration, settler: Settler, tickets: TicketDesk, service: ServiceConfiguration) throws(SystemError) {
        self.config = config
        self.settler = settler
        self.tickets = tickets
        let printer = config.print.map { PrinterAvailability(client: CUPSClient(server: service.cupsServer), queue: $0.printer) }
        self.printer = printer
        var features: [DestinationKind: DestinationFeature] = [:]
        if let export = config.export {
            features[.export] = DestinationFeature(destination: .export, sources: [
                FolderPolicy(folder: config, destination: .export), ExportFolderHealth(path: export.exportFolder, minFree: export.minFree),
            ])
        }
        if let printer {
            features[.print] = DestinationFeature(destination: .print, sources: [FolderPolicy(folder: config, destination: .print), printer])
        }
        self.features = features
        drop = try Directory(path: config.path)
        let serviceArea = try drop.subdirectory(FolderConfiguration.serviceAreaName, create: true, mode: 0o750)
        // Each instance (one per machine on a shared folder) has its own jobs:
        // claiming is a rename into them, so no two instances own one file.
        let own = try serviceArea.subdirectory(service.instance, create: true, mode: 0o750)
        lock = try own.openForAppending("lock")
        guard flock(lock.rawValue, LOCK_EX | LOCK_NB) == 0 else {
            throw SystemError("lock (another hotfolder with instance \"\(service.instance)\" serves this folder)", path: own.child("lock"))
        }
        self.area = try JobArea.open(instance: own)
        status = StatusBoard(folder: config, instance: service.instance, directory: own)
        let saved = (try? own.openForReading("counter")).flatMap { try? $0.readAll(limit: 64) }
            .flatMap { Int(String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
        counter = Mutex((saved, try? own.openForWriting("counter")))
    }

    /// The next value of the folder's counter.
    func nextNumber() -> Int {
        counter.withLock { c in
            c.value += 1
            if let file = c.file {
                // Fixed width at offset 0: one write, no truncation.
                let text = Array(String(format: "%019d\n", c.value).utf8)
                _ = text.withUnsafeBytes { pwrite(file.rawValue, $0.baseAddress, $0.count, 0) }
            }
            return c.value
        }
    }

    /// Opens (creating when missing) one of the folder's output folders. The
    /// open folder is used as long as it is still the one at its path; one that
    /// was renamed away and made anew is opened anew. A path that has become a
    /// symlink since is refused, so a swapped folder cannot redirect a write.
    func outputFolder(_ path: String) throws(SystemError) -> Directory {
        let known = outputs.withLock { $0[path] }
        if let d = known?.directory, let held = known?.identity {
            var now = Glibc.stat()
            if stat(path, &now) == 0, UInt64(now.st_dev) == held.dev, UInt64(now.st_ino) == held.ino { return d }
        }
        var link = Glibc.stat()
        let isLink = lstat(path, &link) == 0 && (link.st_mode & S_IFMT) == S_IFLNK
        let follow = known?.followsLink ?? isLink
        if isLink && !follow {
            throw SystemError("use \(path) (it has become a symbolic link since the service opened it; not followed)", path: path, errno: ELOOP)
        }
        let d = try Directory.create(path: path, followingLink: follow)
        let identity = (try? d.descriptor.stat()).map { (dev: UInt64($0.st_dev), ino: UInt64($0.st_ino)) }
        outputs.withLock { $0[path] = OutputFolder(directory: d, followsLink: follow, identity: identity) }
        return d
    }

    static func same(_ a: Glibc.stat, _ b: Glibc.stat) -> Bool { a.st_ino == b.st_ino && a.st_dev == b.st_dev }

    /// Lets another runtime of this service (after a reload) serve the folder.
    func releaseLock() { _ = flock(lock.rawValue, LOCK_UN) }

    /// Whether the drop folder opened at start is no longer the one at its path
    /// (deleted and made anew, or remounted): every descriptor here is stale.
    /// A deleted folder that is still open sends no IN_DELETE_SELF, so this
    /// has to be asked.
    var isStale: Bool {
        guard let held = try? drop.descriptor.stat() else { return true }
        var now = Glibc.stat()
        guard lstat(config.path, &now) == 0 else { return true }
        return held.st_nlink == 0 || !Self.same(held, now)
    }

    /// Ends the folder's inotify watching (at most once, whoever asks first).
    func stopInotify() {
        if let token = hubToken.withLock({ t -> Int? in defer { t = nil }; return t }) { InotifyHub.shared.remove(token) }
    }

    /// Stops seeing changes (the service stops, or the folder went away).
    func stopWatching() {
        stopInotify()
        poller.withLock { $0 }?.stop()
        rescanTimer?.cancel()
        settler.cancel()
    }

    /// The service's own folders, never watched.
    var excluded: [String] {
        var paths = [config.serviceArea, config.doneFolder, config.failedFolder]
        if let e = config.export { paths.append(e.exportFolder) }
        // The same folders where the watcher meets them inside the drop
        // folder, when the configured path reaches them through a symlink.
        let drop = ConfigurationLoader.canonical(config.path)
        for path in paths {
            let real = ConfigurationLoader.canonical(path)
            guard real.hasPrefix(drop + "/") else { continue }
            let alias = config.path + real.dropFirst(drop.count)
            if !paths.contains(alias) { paths.append(alias) }
        }
        return paths
    }
}
