import Foundation
import Glibc

/// A claimed document's private folder in the drop folder's service area: the
/// original under its own name, the staged results as `.out-*`, the steps in
/// `.journal`. One folder per job and no more: every new inode costs (measured:
/// a mkdir here costs as much as flattening a small PDF).
public final class JobFolder: @unchecked Sendable {
    public let id: String
    public let directory: Directory
    /// Where the original is (the job folder).
    public var input: Directory { directory }
    /// Where staged results go (the job folder, as `.out-*` files).
    public var output: Directory { directory }
    public let journal: Journal
    /// The original's file name, as it was dropped.
    public let originalName: String

    /// Staged results are named with this prefix; an original never starts
    /// with a dot (the watcher ignores dotfiles, `process` refuses them).
    static let outputPrefix = ".out-"

    init(id: String, directory: Directory, originalName: String) throws(SystemError) {
        self.id = id
        self.directory = directory
        self.journal = try Journal(in: directory)
        self.originalName = originalName
    }

    /// The staged file name for a destination's result.
    static func outputName(_ destination: DestinationKind, ext: String) -> String {
        outputPrefix + destination.rawValue + "." + ext
    }

    /// Removes the staged results of an interrupted generation.
    func removeOutputs() {
        for entry in (try? directory.entries()) ?? [] where entry.name.hasPrefix(Self.outputPrefix) {
            try? directory.remove(entry.name)
        }
    }

    /// A new, unique, sortable job id.
    public static func newID(now: Date = Date()) -> String {
        Clock.format("%Y%m%dT%H%M%S", seconds: Int(now.timeIntervalSince1970), utc: true) + "-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }

    public enum ClaimResult {
        case claimed(JobFolder)
        /// The file was gone: someone else claimed it, or it was removed.
        case vanished
    }

    /// Claims `name` from `source` by one atomic rename into a new job folder
    /// under `jobs`: whoever renames first owns the file; nobody else can.
    public static func claim(_ name: String, from source: Directory, relativeFolder: String, into jobs: Directory) throws(SystemError) -> ClaimResult {
        let id = newID()
        let directory = try jobs.subdirectory(id, create: true, mode: 0o700)
        let job = try JobFolder(id: id, directory: directory, originalName: name)
        do {
            try source.move(name, to: job.input, as: name, mode: .noReplace)
        } catch {
            try? jobs.removeTree(id)
            if error.errno == ENOENT { return .vanished }
            throw error
        }
        var record = JournalRecord(.claimed)
        record.name = name
        record.from = relativeFolder
        // Not synced: the original in in/ is the claim; a lost record only
        // loses the subfolder it came from.
        try job.journal.append(record, sync: false)
        return .claimed(job)
    }

    /// Reopens a job folder left by an earlier run; nil when it holds no original.
    public static func reopen(id: String, in jobs: Directory) -> JobFolder? {
        guard let directory = try? jobs.subdirectory(id),
              let name = (try? directory.entries())?.first(where: { !$0.name.hasPrefix(".") })?.name else { return nil }
        return try? JobFolder(id: id, directory: directory, originalName: name)
    }

    /// Opens a job folder by path (in a worker process).
    public static func open(path: String, originalName: String) throws(SystemError) -> JobFolder {
        let directory = try Directory(path: path)
        let id = (path as NSString).lastPathComponent
        return try JobFolder(id: id, directory: directory, originalName: originalName)
    }
}
