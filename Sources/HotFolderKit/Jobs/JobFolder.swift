import Foundation
import Glibc
import Synchronization

/// An instance's jobs in one drop folder: the folder `jobs/` that holds every
/// claimed document and its files, and the journal of their steps
/// (`<drop>/.hotfolder/<instance>/{jobs/,journal}`).
///
/// No folder per job: on ext4 every inode created (and deleted) costs
/// 0.2–0.4 ms here, as much as generating a 1-page PDF, so a document costs no
/// inode beyond its staged output. The files lie in 16 shard folders
/// (`jobs/0` … `jobs/f`, by a hash of the job id), made once: every rename
/// into or out of a folder locks it, and with one folder for every job the
/// job threads, the workers and the sync thread spun on that lock.
public final class JobArea: @unchecked Sendable {
    public let jobs: Directory
    /// `jobs/0` … `jobs/f`.
    let shards: [Directory]
    public let journal: JournalFile
    /// The instance's folder (`<drop>/.hotfolder/<instance>`).
    public let path: String

    /// The instance folder's identity.
    private let identity: Directory.Identity

    static let shardCount = 16

    private init(instance: Directory, identity: Directory.Identity) throws(SystemError) {
        path = instance.path
        self.identity = identity
        let jobs = try instance.subdirectory("jobs", create: true, mode: 0o750)
        self.jobs = jobs
        var shards: [Directory] = []
        for i in 0..<Self.shardCount {
            shards.append(try jobs.subdirectory(String(i, radix: 16), create: true, mode: 0o750))
        }
        self.shards = shards
        journal = try JournalFile(in: instance)
    }

    /// The folder that holds the files of job `id`.
    func shard(for id: String) -> Directory {
        // FNV-1a: stable across runs and processes (Swift's Hasher is seeded).
        var hash: UInt32 = 2_166_136_261
        for byte in id.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return shards[Int(hash % UInt32(Self.shardCount))]
    }

    private struct Weak { weak var area: JobArea? }
    private static let registry = Mutex<[String: Weak]>([:])

    /// Opens (creating `jobs/` and the journal) the area in an instance's
    /// folder. Within one process one folder has one area: the runtime a
    /// reload makes appends to the journal the old runtime's jobs still use.
    /// (A folder deleted and made anew at the same path is another folder.)
    public static func open(instance: Directory) throws(SystemError) -> JobArea {
        let identity = try instance.identity()
        return try registry.withLock { areas throws(SystemError) -> JobArea in
            if let area = areas[instance.path]?.area, area.identity == identity { return area }
            let area = try JobArea(instance: instance, identity: identity)
            areas = areas.filter { $0.value.area != nil }
            areas[instance.path] = Weak(area: area)
            return area
        }
    }

    /// This process is done with the area (its service stopped): the next
    /// opening reads the journal from the disk again.
    func retire() {
        Self.registry.withLock { areas in
            if areas[path]?.area === self { areas[path] = nil }
        }
    }

    /// Opens the area of an instance's folder by path, creating what is missing.
    public static func open(path: String) throws(SystemError) -> JobArea {
        try open(instance: try Directory.create(path: path, mode: 0o750))
    }

    /// What `jobs/` holds, by job: each job's original (its file name) and its
    /// other files (their names in the job's shard). Names that belong to no
    /// job (temporary files of an interrupted write) are in `strays`, with
    /// their folders.
    struct Listing {
        var originals: [String: String] = [:]
        var files: [String: [String]] = [:]
        var strays: [(folder: Directory, name: String)] = []
        /// Job folders of the layout before this one (`jobs/<id>/`).
        var folders: [String] = []
    }

    func list() throws(SystemError) -> Listing {
        var listing = Listing()
        for entry in try jobs.entries() where entry.isDirectory && entry.name.count > 1 {
            listing.folders.append(entry.name)
        }
        for shard in shards {
            for entry in try shard.entries() {
                switch JobFolder.parse(entry.name) {
                case .original(let id):
                    listing.originals[id] = entry.name
                case .file(let id):
                    listing.files[id, default: []].append(entry.name)
                case nil:
                    listing.strays.append((shard, entry.name))
                }
            }
        }
        return listing
    }
}

/// A claimed document's files in its shard of the area's `jobs/`: the original
/// as `<id> <name>`, every other file of the job as `<id>` + a job-relative name
/// that starts with a dot (`<id>.ticket`, `<id>.out-export.pdf`, …). Staged
/// files are named job-relative everywhere else (StagedFile.file, journal
/// records), so the names do not depend on where the job's files are.
public final class JobFolder: @unchecked Sendable {
    public let id: String
    /// The folder the job's files are in (its shard of `jobs/`, shared with other jobs).
    public let directory: Directory
    public let journal: Journal
    /// The original's file name, as it was dropped.
    public let originalName: String
    /// The original's name in `directory`.
    public let originalFile: String
    /// Whether an interrupted generation may have left staged files (a job
    /// resumed from an earlier run, or generated before by this one). Only
    /// the job's thread uses it.
    var mayHaveLeftovers: Bool
    /// Reopened from an earlier run: what its records say may not all have
    /// reached the disk in the order it was done.
    let resumed: Bool
    /// The job's files other than the original, as found by recovery.
    private var knownFiles: [String]?
    /// False when the job is known to have come without a ticket: the
    /// pipeline then need not look for one.
    public var mayHaveTicket = true
    /// Staged export files (job-relative names) moved to their temporary
    /// names and journaled, and not yet known durable; then those that are.
    /// In memory only: after a restart, files are staged and synced again.
    var exportsStaged: Set<String> = []
    private(set) var exportsSynced: Set<String> = []

    /// A sync that started after the files were staged has completed.
    func exportsDurable(_ files: Set<String>) {
        exportsSynced.formUnion(files)
        exportsStaged.subtract(files)
    }

    /// A file that was durable where it was must be made durable again where
    /// it went (copied to another file system after all).
    func exportsNeedSyncAgain(_ file: String) {
        exportsSynced.remove(file)
        exportsStaged.insert(file)
    }

    /// Staged results are named with this prefix (job-relative).
    static let outputPrefix = ".out-"

    init(id: String, directory: Directory, originalName: String, originalFile: String, journal: Journal,
         resumed: Bool = false, knownFiles: [String]? = nil) {
        self.id = id
        self.directory = directory
        self.originalName = originalName
        self.originalFile = originalFile
        self.journal = journal
        self.mayHaveLeftovers = resumed
        self.resumed = resumed
        self.knownFiles = knownFiles
    }

    /// A job's folder as a worker process sees it: files only, no journal.
    public convenience init(id: String, directory: Directory, originalName: String, originalFile: String) {
        self.init(id: id, directory: directory, originalName: originalName, originalFile: originalFile, journal: Journal(job: id, file: nil))
    }

    // MARK: - the job's files

    /// The name in `directory` of the job's file `file` (job-relative, e.g. `.ticket`).
    public func name(_ file: String) -> String { id + file }

    public func create(_ file: String) throws(SystemError) -> FileDescriptor { try directory.createFile(name(file)) }
    public func openForReading(_ file: String) throws(SystemError) -> FileDescriptor { try directory.openForReading(name(file)) }
    public func exists(_ file: String) -> Bool { directory.exists(name(file)) }
    public func remove(_ file: String) throws(SystemError) { try directory.remove(name(file)) }
    public func path(_ file: String) -> String { directory.child(name(file)) }

    public func move(_ file: String, to target: Directory, as newName: String, mode: Directory.RenameMode) throws(SystemError) {
        try directory.move(name(file), to: target, as: newName, mode: mode)
    }

    /// The staged file name (job-relative) for a destination's result.
    static func outputName(_ destination: DestinationKind, ext: String) -> String {
        outputPrefix + destination.rawValue + "." + ext
    }

    /// Removes the staged results of an interrupted generation.
    func removeOutputs() {
        let prefix = name(Self.outputPrefix)
        let names = knownFiles ?? ((try? directory.entries()) ?? []).map(\.name).filter { $0.hasPrefix(id + ".") }
        knownFiles = nil
        for file in names where file.hasPrefix(prefix) {
            try? directory.remove(file)
        }
    }

    /// Removes what is left of the job once its original went to done/ or
    /// failed/: staged files not delivered (a print's PDF, an export's
    /// outputs after a failure) and, with `ticket`, a ticket that could not
    /// follow its document. Named, not listed: listing `jobs/` for every
    /// document would cost as much as all the jobs that wait.
    func removeFiles(ticket: Bool) {
        var names: [String] = ticket ? [Pipeline.ticketFile] : []
        if let result = journal.last(.generated)?.result {
            for output in result.outputs {
                for staged in output.files where journal.last(.exported, destination: output.destination, item: staged.file) == nil {
                    names.append(staged.file)
                }
            }
        }
        for file in names { try? remove(file) }
        if let knownFiles {
            for file in knownFiles { try? directory.remove(file) }
            self.knownFiles = nil
        }
    }

    // MARK: - ids and names

    /// A new, unique, sortable job id (letters, digits and `-` only).
    public static func newID(now: Date = Date()) -> String {
        let random = idGenerator.withLock { $0.next() }
        return Clock.format("%Y%m%dT%H%M%S", seconds: Int(now.timeIntervalSince1970), utc: true) + "-" + String(random, radix: 36)
    }


    /// 64 random bits per id, as unlikely to repeat as the system's random
    /// numbers, without a getrandom call per document.
    private static let idGenerator = Mutex(SplitMix64())

    /// `<id> <name>`, with the name's stem shortened where the whole would
    /// pass 255 bytes (then the journal's claim record has the full name).
    static func originalFile(id: String, name: String) -> String {
        id + " " + FileNameSanitizer.fitting(name, limit: 255 - id.utf8.count - 1)
    }

    enum Entry: Equatable {
        /// `<id> <name>`: the original of job `id`.
        case original(String)
        /// `<id>.<…>`: another file of job `id`.
        case file(String)
    }

    /// Which job a name in `jobs/` belongs to; nil for a name of no job.
    static func parse(_ entry: String) -> Entry? {
        guard let separator = entry.utf8.firstIndex(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: ".") }),
              separator != entry.utf8.startIndex else { return nil }
        let id = entry.utf8[..<separator]
        guard id.allSatisfy({ ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z"))
            || ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) || $0 == UInt8(ascii: "-") }) else { return nil }
        let job = String(decoding: id, as: UTF8.self)
        return entry.utf8[separator] == UInt8(ascii: " ") ? .original(job) : .file(job)
    }

    // MARK: - claiming

    public enum ClaimResult {
        case claimed(JobFolder)
        /// The file was gone: someone else claimed it, or it was removed.
        case vanished
    }

    /// Claims `name` from `source` by one atomic rename into the area's
    /// `jobs/`: whoever renames first owns the file; nobody else can.
    public static func claim(_ name: String, from source: Directory, relativeFolder: String, into area: JobArea,
                             id: String = newID()) throws(SystemError) -> ClaimResult {
        let file = originalFile(id: id, name: name)
        let job = JobFolder(id: id, directory: area.shard(for: id), originalName: name, originalFile: file, journal: Journal(job: id, file: area.journal))
        var record = JournalRecord(.claimed)
        record.name = name
        record.from = relativeFolder
        // The original's new name carries its name, so the claim record need
        // not be synced (a lost one only loses the subfolder it came from).
        // A name too long to be carried whole is journaled, synced, first.
        let nameInFile = file.utf8.count == id.utf8.count + 1 + name.utf8.count
        if !nameInFile { try job.journal.append(record, sync: true) }
        do {
            try source.move(name, to: job.directory, as: file, mode: .noReplace)
        } catch {
            if !nameInFile { job.journal.close() }
            if error.errno == ENOENT { return .vanished }
            throw error
        }
        if nameInFile {
            try? job.journal.append(record, sync: false)
            // From a subfolder: where its ticket is to be looked for after a
            // restart is written at once (not synced), so that killing the
            // service does not lose it.
            if !relativeFolder.isEmpty { try? area.journal.flush(sync: false) }
        }
        return .claimed(job)
    }

    /// Reopens a job an earlier run left: its original `originalFile`, its
    /// other files `files`, its records.
    static func reopen(id: String, originalFile: String, files: [String], in area: JobArea, records: [JournalRecord]) -> JobFolder {
        let fromFile = String(originalFile.dropFirst(id.count + 1))
        let name = records.first(where: { $0.event == .claimed })?.name ?? fromFile
        return JobFolder(id: id, directory: area.shard(for: id), originalName: name, originalFile: originalFile,
                         journal: Journal(job: id, records: records, file: area.journal), resumed: true, knownFiles: files)
    }
}
