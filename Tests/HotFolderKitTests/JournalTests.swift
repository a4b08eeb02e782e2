import Foundation
import XCTest
@testable import HotFolderKit

/// The instance journal (one file for all jobs), its encoding, the flat
/// `jobs/` layout, and the frames exchanged with worker processes.
final class JournalTests: XCTestCase {
    static func sampleResult() -> PipelineResult {
        var facts = DocumentFacts(type: .pdf)
        facts.pages = 12
        facts.title = "Ünïcode title / with slash"
        facts.encrypted = true
        facts.allowPrintHighResolution = false
        facts.annotations = 7
        facts.signed = true
        var output = StagedOutput(destination: .export, files: [StagedFile(file: ".out-export.p1.png", role: .page, page: 1),
                                                               StagedFile(file: ".out-export.preview.png", role: .preview)],
                                  format: .image, pages: "1-3,5", annotations: .flattenForPrint, ext: "png", pageCount: 4, documentPages: 12)
        output.copies = 3
        output.sides = "two-sided-long-edge"
        output.name = "from the ticket"
        return PipelineResult(facts: facts, outputs: [output], warnings: ["a warning"], notes: ["a note"])
    }

    static func sampleRecords() -> [JournalRecord] {
        var claimed = JournalRecord(.claimed)
        claimed.name = "report.pdf"
        claimed.from = "sub/folder"
        var generated = JournalRecord(.generated)
        generated.result = sampleResult()
        generated.number = -42
        var exporting = JournalRecord(.exporting)
        exporting.destination = .export
        exporting.item = ".out-export.pdf"
        exporting.temporary = ".hf-x.tmp"
        exporting.name = "report.pdf"
        var submitted = JournalRecord(.printSubmitted)
        submitted.destination = .print
        submitted.printJob = Int32.max
        submitted.printJobName = "report [x]"
        var failing = JournalRecord(.failing)
        failing.failure = JobFailure(.print, "CUPS said no", remedy: "Ask CUPS.", transient: true)
        return [claimed, generated, exporting, submitted, failing, JournalRecord(.closed)]
    }

    /// Job ids' randomness: SplitMix64's published reference outputs (seed 0),
    /// which the seeded replay of the reliability tests relies on too; ids
    /// are unique and keep to letters, digits and `-`.
    func testJobIDsRandomnessIsSplitMix64() {
        var generator = SplitMix64(seed: 0)
        XCTAssertEqual([generator.next(), generator.next(), generator.next()],
                       [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F])
        let ids = (0..<1000).map { _ in JobFolder.newID() }
        XCTAssertEqual(Set(ids).count, ids.count)
        XCTAssertTrue(ids.allSatisfy { $0.utf8.allSatisfy { c in (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || c == 0x2D } }, "\(ids.prefix(3))")
    }

    func testRecordsRoundTripThroughTheCompactEncoding() throws {
        for record in Self.sampleRecords() {
            XCTAssertEqual(try JournalRecord(compactBytes: record.compactBytes), record)
        }
        let response = GenerationResponse.result(Self.sampleResult())
        guard case .result(let result) = try GenerationResponse(compactBytes: response.compactBytes) else { return XCTFail("not a result") }
        XCTAssertEqual(result, Self.sampleResult())
        XCTAssertThrowsError(try JournalRecord(compactBytes: Array(JournalRecord(.claimed).compactBytes.dropLast())), "truncated")
    }

    func testWorkerRequestCarriesTheConfigurationOnlyWhenAsked() throws {
        let temp = TemporaryFolder("hf-journal")
        let config = try configuration("[folder test]\npath = drop\nexport.to = out\nexport.name = {n}-{stem}\n", in: temp)
        let folder = try XCTUnwrap(config.folder(named: "test"))
        var request = GenerationRequest(folder: folder, jobsDirectory: "/x/jobs", jobID: "20240101T000000-abc", originalFile: "20240101T000000-abc a b.pdf",
                                        originalName: "a b.pdf", mayHaveTicket: false, now: 1234.5, number: 7)
        let decoded = try GenerationRequest(compactBytes: request.compactBytes)
        XCTAssertEqual(decoded.folder, folder)
        XCTAssertEqual(decoded.originalFile, request.originalFile)
        XCTAssertEqual(decoded.mayHaveTicket, false)
        XCTAssertEqual(decoded.number, 7)
        request.folder = nil
        let small = request.compactBytes
        XCTAssertNil(try GenerationRequest(compactBytes: small).folder)
        XCTAssertLessThan(small.count, 100, "without the configuration a request is small")
    }

    func testJournalKeepsUnfinishedJobsAcrossReopening() throws {
        let temp = TemporaryFolder("hf-journal")
        let directory = try Directory.create(path: temp.sub("instance"))
        let records = Array(Self.sampleRecords().dropLast())
        do {
            let file = try JournalFile(in: directory)
            let a = Journal(job: "a", file: file)
            let b = Journal(job: "b", file: file)
            for record in records { try a.append(record, sync: false) }
            try b.append(JournalRecord(.claimed), sync: false)
            b.close()
            // Not synced, not flushed: still in memory...
            XCTAssertEqual(JournalFile.records(in: readBytes(directory.child(JournalFile.fileName))).count, 0)
            try file.flush(sync: true)
            XCTAssertEqual(file.unfinishedJobs().map(\.job), ["a"])
        }
        let reopened = try JournalFile(in: directory)
        let jobs = reopened.unfinishedJobs()
        XCTAssertEqual(jobs.map(\.job), ["a"], "the closed job is gone")
        XCTAssertEqual(jobs.first?.records, records)
    }

    func testTornOrDamagedRecordsEndTheJournal() throws {
        let temp = TemporaryFolder("hf-journal")
        let directory = try Directory.create(path: temp.sub("instance"))
        let records = Self.sampleRecords().dropLast().map { (job: "j", record: $0) }
        let whole = JournalFile.bytes(of: Array(records))
        let path = directory.child(JournalFile.fileName)
        // Cut in the middle of the last record: the others are kept.
        let lastLength = JournalFile.bytes(of: [records[records.count - 1]]).count - JournalFile.header.count
        writeFile(path, Array(whole.dropLast(lastLength / 2)))
        XCTAssertEqual(try JournalFile(in: directory).unfinishedJobs().first?.records.count, records.count - 1)
        // A flipped byte in the second record: only the first is read.
        var damaged = whole
        let firstLength = JournalFile.bytes(of: [records[0]]).count - JournalFile.header.count
        damaged[JournalFile.header.count + firstLength + 12] ^= 0xFF
        writeFile(path, damaged)
        XCTAssertEqual(try JournalFile(in: directory).unfinishedJobs().first?.records.count, 1)
        // Another format's journal is not read (the jobs resume from their files).
        writeFile(path, Array("{\"event\":\"claimed\"}\n".utf8))
        XCTAssertEqual(try JournalFile(in: directory).unfinishedJobs().count, 0)
    }

    func testJournalIsCompactedWhileRunning() throws {
        let temp = TemporaryFolder("hf-journal")
        let directory = try Directory.create(path: temp.sub("instance"))
        let file = try JournalFile(in: directory, threshold: 4096)
        let kept = Journal(job: "kept", file: file)
        try kept.append(JournalRecord(.claimed), sync: true)
        for i in 0..<200 {
            let done = Journal(job: "done-\(i)", file: file)
            try done.append(JournalRecord(.claimed), sync: false)
            done.close()
        }
        try file.flush(sync: true)
        XCTAssertLessThan(file.size, 4096 * 2)
        let onDisk = JournalFile.records(in: readBytes(directory.child(JournalFile.fileName)))
        XCTAssertTrue(onDisk.contains { $0.job == "kept" }, "the unfinished job survived the compaction")
        XCTAssertLessThan(onDisk.count, 200, "finished jobs were dropped")
        XCTAssertEqual(try JournalFile(in: directory).unfinishedJobs().map(\.job), ["kept"])
    }

    func testFlatJobNames() {
        XCTAssertEqual(JobFolder.parse("20240101T000000-abc report.pdf"), .original("20240101T000000-abc"))
        XCTAssertEqual(JobFolder.parse("20240101T000000-abc .hidden name"), .original("20240101T000000-abc"))
        XCTAssertEqual(JobFolder.parse("20240101T000000-abc.out-export.pdf"), .file("20240101T000000-abc"))
        XCTAssertEqual(JobFolder.parse("20240101T000000-abc.ticket"), .file("20240101T000000-abc"))
        XCTAssertNil(JobFolder.parse(".hf-error-1.tmp"))
        XCTAssertNil(JobFolder.parse("noseparator"))
        XCTAssertNil(JobFolder.parse("bad_id x.pdf"))
        let long = String(repeating: "é", count: 200) + ".pdf"
        let file = JobFolder.originalFile(id: "20240101T000000-abc", name: long)
        XCTAssertLessThanOrEqual(file.utf8.count, 255)
        XCTAssertTrue(file.hasSuffix(".pdf"))
        XCTAssertEqual(JobFolder.parse(file), .original("20240101T000000-abc"))
    }

    /// A name too long to be carried whole by `<id> <name>`: the claim record
    /// (synced first) has it, and the document ends under its own name.
    func testLongNameSurvivesTheClaim() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        let long = String(repeating: "long name ", count: 24) + "end.pdf"
        XCTAssertGreaterThan(long.utf8.count, 230)
        writeFile(h.drop + "/" + long, TestPDF(pages: 1).bytes)
        let area = try JobArea.open(path: instancePath(of: h.drop))
        guard case .claimed(let job) = try JobFolder.claim(long, from: try Directory(path: h.drop), relativeFolder: "", into: area) else {
            return XCTFail("not claimed")
        }
        XCTAssertNotEqual(job.originalFile, job.id + " " + long)
        XCTAssertEqual(journalRecords(at: instancePath(of: h.drop) + "/journal").first { $0.job == job.id }?.record.name, long,
                       "on disk before the rename")
        h.start()
        h.waitForOutcomes(1)
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(files(in: h.done), [long])
    }

    /// A job folder of the layout before the flat `jobs/` (one folder per
    /// job, `.journal` in JSON lines) is taken over and finished.
    func testJobFolderOfTheEarlierLayoutIsResumed() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        let id = "20240101T000000-old"
        let folder = jobsPath(of: h.drop) + "/" + id
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        writeFile(folder + "/old layout.pdf", TestPDF(pages: 2).bytes)
        writeFile(folder + "/.ticket", "copies = 1\n")
        var claimed = JournalRecord(.claimed)
        claimed.name = "old layout.pdf"
        claimed.from = ""
        let encoder = JSONEncoder()
        writeFile(folder + "/.journal", Array(try encoder.encode(claimed)) + [UInt8(ascii: "\n")])
        h.start()
        h.waitForOutcomes(1)
        h.waitUntilIdle()
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(files(in: h.out), ["old layout.pdf"])
        XCTAssertEqual(files(in: h.done), ["old layout.pdf", "old layout.pdf.ticket"])
        XCTAssertFalse(exists(folder), "the old folder is gone")
        XCTAssertEqual(jobFolders(of: h.drop), [])
    }
}
