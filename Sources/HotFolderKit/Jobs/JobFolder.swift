import Foundation
import Glibc

/// A claimed document's private folder in the drop folder's service area:
/// `in/` holds the original, `out/` the staged results, `journal` the steps.
public final class JobFolder: @unchecked Sendable {
    public let id: String
    public let directory: Directory
    public let input: Directory
    public let output: Directory
    public let journal: Journal
    /// The original's file name, as it was dropped.
    public let originalName: String

    static let inputName = "in"
    static let outputName = "out"

    init(id: String, directory: Directory, originalName: String) throws(SystemError) {
        self.id = id
        self.directory = directory
        self.input = try directory.subdirectory(Self.inputName, create: true, mode: 0o700)
        self.output = try directory.subdirectory(Self.outputName, create: true, mode: 0o700)
        self.journal = try Journal(in: directory)
        self.originalName = originalName
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
              let input = try? directory.subdirectory(inputName),
              let name = (try? input.entries())?.first?.name else { return nil }
        return try? JobFolder(id: id, directory: directory, originalName: name)
    }

    /// Opens a job folder by path (in a worker process).
    public static func open(path: String, originalName: String) throws(SystemError) -> JobFolder {
        let directory = try Directory(path: path)
        let id = (path as NSString).lastPathComponent
        return try JobFolder(id: id, directory: directory, originalName: originalName)
    }

    /// The folder (relative to the drop folder) the original came from.
    public var relativeFolder: String { journal.last(.claimed)?.from ?? "" }
}
