import Foundation
import Glibc
import Synchronization

/// One record of a job's journal. Each step is written (and, where
/// exactly-once needs it, synced) before the step's effect, so a restarted
/// service knows where every job stood.
public struct JournalRecord: Sendable, Codable, Equatable {
    public enum Event: String, Sendable, Codable {
        case claimed, generated, exporting, exported, printSubmitting, printSubmitted, printed, printFailed, finished, failing
        /// The job's files are gone from `jobs/`: nothing is left to do or to
        /// recover, and compaction drops the job's records.
        case closed
    }

    public var event: Event
    public var time: Double = Date().timeIntervalSince1970
    public var name: String?
    public var from: String?
    public var temporary: String?
    public var destination: DestinationKind?
    /// The staged file an export record is about (a destination may deliver several).
    public var item: String?
    public var result: PipelineResult?
    public var failure: JobFailure?
    public var printJob: Int32?
    public var printJobName: String?
    /// The folder's counter value given to this job ({n}).
    public var number: Int?

    public init(_ event: Event) { self.event = event }
}

/// One job's records: its view of the instance's journal file. Only the
/// thread running the job appends to it (a job runs on one thread at a time).
public final class Journal: @unchecked Sendable {
    public let job: String
    /// Nil in a worker process, which only generates and never journals.
    let file: JournalFile?
    public private(set) var records: [JournalRecord]

    init(job: String, records: [JournalRecord] = [], file: JournalFile?) {
        self.job = job
        self.records = records
        self.file = file
    }

    /// Appends a record; with `sync` it is on disk before this returns.
    public func append(_ record: JournalRecord, sync: Bool = true) throws(SystemError) {
        try file?.append(record, job: job, sync: sync)
        records.append(record)
    }

    /// Appends a destination's record, filled in by `fill`.
    public func append(_ event: JournalRecord.Event, destination: DestinationKind, sync: Bool = true,
                       _ fill: (inout JournalRecord) -> Void) throws(SystemError) {
        var record = JournalRecord(event)
        record.destination = destination
        fill(&record)
        try append(record, sync: sync)
    }

    /// Marks the job finished for good (its files are gone); not synced: a
    /// lost mark only makes the next start look at the job once more and
    /// find nothing to do.
    func close() {
        try? append(JournalRecord(.closed), sync: false)
    }

    public func last(_ event: JournalRecord.Event, destination: DestinationKind? = nil, item: String? = nil) -> JournalRecord? {
        records.last { $0.event == event && (destination == nil || $0.destination == destination) && (item == nil || $0.item == item) }
    }
}

/// The journal of every job of one instance in one drop folder:
/// `<drop>/.hotfolder/<instance>/journal`, append-only, one framed record per
/// step, tagged with its job's id. One file instead of one per job: creating
/// (and later deleting) a file per document cost more than generating a
/// 1-page PDF (ext4 scans past recently deleted inodes on every create).
///
/// Format: an 8-byte header (`HFJ` + version + 4 reserved), then records, each
/// `[payload length: UInt32 LE][CRC-32 of payload: UInt32 LE][payload]` with
/// the payload in `CompactWriter`'s encoding (job id, then the record). A torn
/// last record (a crash mid-write) fails its length or checksum and is
/// ignored with everything after it: its step had not started.
///
/// Records that need not be synced wait in memory and are written together:
/// before the next sync (`SyncBatcher` flushes the file first), with the next
/// synced record, or when 64 KiB have gathered. Losing them in a crash is
/// what the service is built for (every step that has to survive is synced
/// before its effect); writing each one cost a system call per step.
///
/// It is compacted when opened and whenever it has grown well past what the
/// unfinished jobs need: their records go to a new file that replaces it.
public final class JournalFile: SyncPreparation, @unchecked Sendable {
    public static let fileName = "journal"
    static let header: [UInt8] = [0x48, 0x46, 0x4A, formatVersion, 0, 0, 0, 0]
    /// The layout of the records (see CompactCoding): a change needs a new version.
    static let formatVersion: UInt8 = 1
    /// Compaction runs once the file passes this size and is more than
    /// twice what the unfinished jobs' records take.
    static let compactionThreshold = 4 << 20
    /// Unsynced records written once this many bytes wait.
    static let bufferLimit = 64 << 10

    private struct State {
        var file: FileDescriptor
        var size: Int
        /// The encoded records of every job not closed, by job id, in order.
        var live: [String: [UInt8]]
        var liveBytes: Int
        /// Records appended and not yet written, in order.
        var pending: [UInt8] = []
    }

    private let directory: Directory
    private let state: Mutex<State>
    /// Held while records are written: records reach the file in the order
    /// they were appended, and `flush` returns only once everything appended
    /// before it is in the file (a write another thread has begun included).
    private let writing = NSLock()
    let threshold: Int

    /// Opens the journal in `directory` (an instance's folder), reading what an
    /// earlier run left and compacting it to the jobs that are not closed.
    init(in directory: Directory, threshold: Int = JournalFile.compactionThreshold) throws(SystemError) {
        self.directory = directory
        self.threshold = threshold
        var live: [String: [UInt8]] = [:]
        var order: [String] = []
        var bytes: [UInt8] = []
        if let fd = try? directory.openForReading(Self.fileName) {
            bytes = try fd.readAll(limit: Int.max)
        }
        var whole = 0
        for (job, frame) in Self.frames(bytes) {
            if live[job] == nil { order.append(job) }
            live[job, default: []] += frame
            whole += frame.count
        }
        // Closed jobs need nothing any more; their records go at a compaction.
        for (job, frames) in live where Self.decode(frames).contains(where: { $0.event == .closed }) {
            live[job] = nil
        }
        let liveBytes = live.values.reduce(0) { $0 + $1.count }
        let file: FileDescriptor
        let size: Int
        if !bytes.isEmpty && whole > 0 && bytes.count == Self.header.count + whole
            && !(bytes.count > 64 << 10 && bytes.count > 2 * (Self.header.count + liveBytes)) {
            // Whole, and not much to gain by compacting it: appended to as it is
            // (a start need not wait for a rewrite and its syncs).
            file = try directory.openForAppending(Self.fileName)
            size = bytes.count
        } else {
            // Missing, empty, another format's, torn at the end (what follows a
            // torn record could never be read), or mostly finished jobs.
            let kept = order.filter { live[$0] != nil }
            file = try Self.rewrite(directory, jobs: kept.compactMap { live[$0] })
            size = Self.header.count + liveBytes
        }
        state = Mutex(State(file: file, size: size, live: live, liveBytes: liveBytes))
    }

    /// The jobs not closed, each with its records, by job id (that is, by
    /// the time they were claimed).
    func unfinishedJobs() -> [(job: String, records: [JournalRecord])] {
        let live = state.withLock { $0.live }
        return live.map { (job: $0.key, records: Self.decode($0.value)) }.sorted { $0.job < $1.job }
    }

    /// The records of one job (empty when it has none or is closed).
    func records(of job: String) -> [JournalRecord] {
        state.withLock { $0.live[job] }.map(Self.decode) ?? []
    }

    func append(_ record: JournalRecord, job: String, sync: Bool) throws(SystemError) {
        var payload = CompactWriter(capacity: 128)
        payload.string(job)
        payload.value(record)
        let frame = Self.frame(payload.bytes)
        let closing = record.event == .closed
        let write = state.withLock { s -> Bool in
            s.size += frame.count
            if closing {
                s.liveBytes -= s.live.removeValue(forKey: job)?.count ?? 0
            } else {
                s.live[job, default: []] += frame
                s.liveBytes += frame.count
            }
            s.pending += frame
            return sync || s.pending.count >= Self.bufferLimit || (s.size > threshold && s.size > 2 * s.liveBytes)
        }
        if write { try flush(sync: sync) }
    }

    /// Writes the records that wait in memory; with `sync`, makes the file
    /// durable too.
    func flush(sync: Bool) throws(SystemError) {
        writing.lock()
        defer { writing.unlock() }
        let (file, bytes) = state.withLock { s -> (FileDescriptor, [UInt8]) in
            if s.size > threshold && s.size > 2 * s.liveBytes,
               let compacted = try? Self.rewrite(directory, jobs: Array(s.live.values)) {
                // The new file has every live record, those that waited
                // included, and is synced. (A compaction that fails leaves
                // the file as it was.)
                s.file = compacted
                s.size = Self.header.count + s.liveBytes
                s.pending.removeAll()
            }
            defer { s.pending.removeAll() }
            return (s.file, s.pending)
        }
        if !bytes.isEmpty { try file.write(bytes) }
        if sync, fdatasync(file.rawValue) != 0 { throw SystemError("fdatasync", path: file.path) }
    }

    /// Before a sync of the file system: what waits must be in the file.
    func prepareForSync() throws(SystemError) { try flush(sync: false) }

    /// The current size of the file (for tests).
    var size: Int { state.withLock { $0.size } }

    // MARK: - file format

    /// The records in a journal's bytes, with their jobs' ids, up to the first
    /// torn one (for tests and diagnostics).
    static func records(in bytes: [UInt8]) -> [(job: String, record: JournalRecord)] {
        frames(bytes).compactMap { job, frame in decode(frame).first.map { (job, $0) } }
    }

    /// A journal's bytes holding `records` (for tests).
    static func bytes(of records: [(job: String, record: JournalRecord)]) -> [UInt8] {
        records.reduce(header) { bytes, entry in
            var payload = CompactWriter()
            payload.string(entry.job)
            payload.value(entry.record)
            return bytes + frame(payload.bytes)
        }
    }

    private static func frame(_ payload: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = []
        frame.reserveCapacity(payload.count + 8)
        let n = UInt32(payload.count)
        let crc = CRC32.checksum(payload[...])
        for shift in stride(from: 0, to: 32, by: 8) { frame.append(UInt8(truncatingIfNeeded: n >> UInt32(shift))) }
        for shift in stride(from: 0, to: 32, by: 8) { frame.append(UInt8(truncatingIfNeeded: crc >> UInt32(shift))) }
        frame += payload
        return frame
    }

    /// The whole frames of a journal's bytes with their job ids, up to the first torn one.
    private static func frames(_ bytes: [UInt8]) -> [(job: String, frame: [UInt8])] {
        guard bytes.count >= header.count, Array(bytes[0..<3]) == Array(header[0..<3]) else { return [] }
        // Another version's records cannot be read: the jobs resume from their files.
        guard bytes[3] == formatVersion else { return [] }
        var result: [(String, [UInt8])] = []
        var offset = header.count
        func u32(_ at: Int) -> UInt32 {
            (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[at + $1]) << UInt32(8 * $1) }
        }
        while bytes.count - offset >= 8 {
            let n = Int(u32(offset))
            let start = offset + 8
            guard n <= bytes.count - start, CRC32.checksum(bytes[start..<(start + n)]) == u32(offset + 4) else { break }
            var reader = CompactReader(bytes, from: start, to: start + n)
            guard let job = try? reader.string() else { break }
            result.append((job, Array(bytes[offset..<(start + n)])))
            offset = start + n
        }
        return result
    }

    private static func decode(_ frames: [UInt8]) -> [JournalRecord] {
        var records: [JournalRecord] = []
        var offset = 0
        while frames.count - offset >= 8 {
            let n = (0..<4).reduce(0) { $0 | Int(frames[offset + $1]) << (8 * $1) }
            let start = offset + 8
            guard n <= frames.count - start else { break }
            var reader = CompactReader(frames, from: start, to: start + n)
            if (try? reader.string()) != nil, let record = try? JournalRecord(from: &reader) { records.append(record) }
            offset = start + n
        }
        return records
    }

    /// Writes `jobs`' frames to a new file, syncs it and puts it in place of
    /// the journal; returns it open for appending. (Synced even when empty:
    /// a record synced later must not be lost with the file's name.)
    private static func rewrite(_ directory: Directory, jobs: [[UInt8]]) throws(SystemError) -> FileDescriptor {
        let temporary = fileName + ".new"
        try? directory.remove(temporary)
        let file = try directory.openForAppending(temporary)
        var bytes = header
        bytes.reserveCapacity(jobs.reduce(header.count) { $0 + $1.count })
        for frames in jobs { bytes += frames }
        try file.write(bytes)
        guard fdatasync(file.rawValue) == 0 else { throw SystemError("fdatasync", path: file.path) }
        try directory.move(temporary, to: directory, as: fileName, mode: .replace)
        // The rename is durable before anything is appended to the new file.
        try directory.sync()
        return file
    }
}
