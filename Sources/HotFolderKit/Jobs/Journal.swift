import Foundation

/// One line of a job's journal. Each step is written (and synced) before the
/// step's effect, so a restarted service knows where every job stood.
public struct JournalRecord: Sendable, Codable, Equatable {
    public enum Event: String, Sendable, Codable {
        case claimed, generated, exporting, exported, printSubmitting, printSubmitted, printed, printFailed, finished, failing
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

/// A job's append-only journal file.
public final class Journal: @unchecked Sendable {
    public static let fileName = ".journal"
    private let file: FileDescriptor
    public private(set) var records: [JournalRecord]

    /// Opens (creating if needed) the journal in `directory`, reading what is there.
    public init(in directory: Directory) throws(SystemError) {
        records = Journal.read(directory)
        file = try directory.openForAppending(Journal.fileName)
    }

    public static func read(_ directory: Directory) -> [JournalRecord] {
        guard let fd = try? directory.openForReading(fileName), let bytes = try? fd.readAll() else { return [] }
        let decoder = JSONDecoder()
        // A torn last line (crash mid-write) is ignored: its step had not started.
        return bytes.split(separator: UInt8(ascii: "\n")).compactMap { try? decoder.decode(JournalRecord.self, from: Data($0)) }
    }

    /// Appends a record; with `sync` it is on disk before this returns.
    public func append(_ record: JournalRecord, sync: Bool = true) throws(SystemError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(record) else { return }
        try file.write(Array(data) + [UInt8(ascii: "\n")])
        if sync { try file.sync() }
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

    public func last(_ event: JournalRecord.Event, destination: DestinationKind? = nil, item: String? = nil) -> JournalRecord? {
        records.last { $0.event == event && (destination == nil || $0.destination == destination) && (item == nil || $0.item == item) }
    }
}
