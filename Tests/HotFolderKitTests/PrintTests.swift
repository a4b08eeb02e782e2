import Foundation
import Synchronization
import XCTest
@testable import HotFolderKit

/// Printing through a real private cupsd (scripts/cups-sandbox) with a capture
/// backend: no mock of libcups anywhere.
final class PrintTests: XCTestCase {
    var cups: CUPSSandbox!
    var temp: TemporaryFolder!
    var drop: String { temp.path + "/drop" }

    override func setUpWithError() throws {
        cups = try CUPSSandbox(queues: ["station"])
        temp = TemporaryFolder("hf-print")
        _ = temp.sub("drop")
    }

    override func tearDown() {
        cups = nil
        temp = nil
    }

    func makeService(_ folderLines: String, recorder: Recorder, instance: String = "test") throws -> HotFolderService {
        let text = """
        [service]
        cups-server = \(cups.server)
        instance = \(instance)
        log-level = debug

        [folder station]
        path = drop
        settle = 0
        \(folderLines)
        """
        let file = temp.path + "/hotfolder.conf"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return HotFolderService(configuration: try ServiceConfiguration.load(file: file), delegate: recorder, logToStandardError: false)
    }

    func captures(_ queue: String = "station") -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "\(cups.dir)/printed/\(queue)")) ?? []).filter { $0.hasSuffix(".json") }.sorted()
    }

    func drop(_ pdf: TestPDF, as name: String) throws {
        let staging = temp.sub("staging")
        _ = try pdf.write(to: staging + "/" + name)
        XCTAssertEqual(rename(staging + "/" + name, drop + "/" + name), 0)
    }

    /// The captured bytes are the generated PDF: selected pages, annotations
    /// flattened for print (none left), the job options as configured.
    func testPrintsSelectedPagesFlattenedWithOptions() throws {
        let recorder = Recorder()
        let service = try makeService("""
        print.printer = station
        print.copies = 2
        print.sides = two-sided-long-edge
        print.media = A4
        print.pages = 2-3
        print.options = job-priority=60 hf-note="a;touch /tmp/hf-pwned $(id)"
        """, recorder: recorder)
        service.start()
        defer { service.stop() }
        let pdf = TestPDF(pages: 4, title: "Quarterly", annotations: [1: [.square("printed"), .square("screen-only", flags: [])], 2: [.text("note")]])
        try drop(pdf, as: "report.pdf")
        waitUntil(timeout: 60, "one finished job") { recorder.outcomes.count == 1 }
        let outcome = try XCTUnwrap(recorder.outcomes.first)
        XCTAssertTrue(outcome.succeeded, "\(String(describing: outcome.failure))")
        XCTAssertEqual(captures().count, 1)
        let capture = try XCTUnwrap(cups.capture(queue: "station", job: 1))
        let printed = temp.path + "/printed.pdf"
        try capture.document.write(to: URL(fileURLWithPath: printed))
        let fd = try Directory(path: temp.path).openForReading("printed.pdf")
        let document = try PDFDocument.open(fd, description: "printed.pdf", password: nil)
        let info = try document.info()
        XCTAssertEqual(info.pages, 2)
        XCTAssertEqual(info.annotations, 0, "flatten-for-print leaves no annotation")
        XCTAssertFalse(info.hasForm)
        let bytes = [UInt8](capture.document)
        XCTAssertEqual(PDFBytes.pageMarkers(bytes), [2, 3])
        XCTAssertTrue(PDFBytes.contains(bytes, "/HFTestAP (printed)"), "the print-flagged appearance is on the page")
        XCTAssertFalse(PDFBytes.contains(bytes, "/HFTestAP (screen-only)"), "an annotation without the print flag is not printed")
        let options = try XCTUnwrap(capture.metadata["options"] as? [String: Any])
        XCTAssertEqual(options["sides"] as? String, "two-sided-long-edge")
        XCTAssertEqual(options["media"] as? String, "A4")
        XCTAssertEqual(capture.metadata["copies"] as? Int, 2)
        // An option value with shell metacharacters is only an option value.
        XCTAssertEqual(options["hf-note"] as? String, "a;touch /tmp/hf-pwned $(id)", "\(capture.metadata)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/tmp/hf-pwned"))
        XCTAssertTrue((capture.metadata["title"] as? String ?? "").hasPrefix("Quarterly ["), "job name from {title|stem} plus the job id")
        XCTAssertTrue(FileManager.default.fileExists(atPath: drop + "/done/report.pdf"))
    }

    /// An image is printable (converted to a PDF page), and a ticket picks
    /// copies, sides and the job name among what the folder allows.
    func testAJPEGWithATicketPrintsAsAPDFWithTheTicketsChoices() throws {
        let recorder = Recorder()
        let service = try makeService("print.printer = station\nprint.sides = one-sided, two-sided-long-edge\nprint.max-copies = 3\n", recorder: recorder)
        service.start()
        defer { service.stop() }
        let pdf = try TestPDF(pages: 1).write(to: temp.path + "/for-jpeg.pdf")
        let made = try runProcess("/usr/bin/pdftoppm", ["-r", "40", "-jpeg", "-singlefile", pdf, temp.path + "/scan"])
        XCTAssertEqual(made.status, 0, made.stderr)
        let photo = readBytes(temp.path + "/scan.jpg")
        writeFile(temp.path + "/ticket.tmp", "copies = 3\nsides = two-sided-long-edge\nname = Scan for Ann\n")
        XCTAssertEqual(rename(temp.path + "/ticket.tmp", drop + "/scan.jpg.ticket"), 0)
        writeFile(temp.path + "/staging.jpg", photo)
        XCTAssertEqual(rename(temp.path + "/staging.jpg", drop + "/scan.jpg"), 0)
        waitUntil(timeout: 60, "one finished job") { recorder.outcomes.count == 1 }
        XCTAssertTrue(recorder.outcomes.first?.succeeded == true, recorder.logText)
        let capture = try XCTUnwrap(cups.capture(queue: "station", job: 1))
        let bytes = [UInt8](capture.document)
        XCTAssertEqual(Array(bytes.prefix(5)), Array("%PDF-".utf8), "printers get a PDF")
        XCTAssertTrue(bytes.firstRange(of: photo) != nil, "with the JPEG inside, not re-encoded")
        let options = try XCTUnwrap(capture.metadata["options"] as? [String: Any])
        XCTAssertEqual(options["sides"] as? String, "two-sided-long-edge")
        XCTAssertEqual(capture.metadata["copies"] as? Int, 3)
        XCTAssertTrue((capture.metadata["title"] as? String ?? "").hasPrefix("Scan for Ann ["), "\(capture.metadata)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: drop + "/done/scan.jpg.ticket"))
    }

    func testPrintForbiddingPDFFailsWithReason() throws {
        let corpus = try Corpus.require()
        let recorder = Recorder()
        let service = try makeService("print.printer = station", recorder: recorder)
        service.start()
        defer { service.stop() }
        XCTAssertEqual(copyfile(corpus + "/enc--qpdf--enc-R3,V2,O=master.pdf", drop + "/locked.pdf"), true)
        waitUntil(timeout: 60, "the job to end") { recorder.outcomes.count == 1 }
        XCTAssertEqual(recorder.outcomes.first?.failure?.step, .print)
        let error = try String(contentsOfFile: drop + "/failed/locked.pdf.error.txt", encoding: .utf8)
        XCTAssertTrue(error.contains("forbid printing"), error)
        XCTAssertTrue(error.contains("Ask the author"), error)
        XCTAssertTrue(captures().isEmpty, "nothing was printed")
    }

    /// cupsdisable: documents wait (claimed, not failed) and print after cupsenable.
    func testStoppedPrinterMakesDocumentsWaitThenPrint() throws {
        try cups.tool("cupsdisable", ["station"])
        let recorder = Recorder()
        let service = try makeService("print.printer = station", recorder: recorder)
        service.start()
        defer { service.stop() }
        for i in 1...3 { try drop(TestPDF(pages: 1, title: "doc \(i)"), as: "doc\(i).pdf") }
        waitUntil(timeout: 60, "the documents to be claimed and waiting") {
            files(in: drop).filter { $0.hasSuffix(".pdf") }.isEmpty && recorder.logText.contains("is stopped")
        }
        XCTAssertTrue(recorder.outcomes.isEmpty, "nothing failed while the printer was stopped")
        XCTAssertEqual(recorder.logs.filter { $0.message.contains("printing paused") }.count, 1, "the reason is logged once")
        // `hotfolder status` says which source said no, and why each document waits.
        let config = try ServiceConfiguration.load(file: temp.path + "/hotfolder.conf")
        waitUntil(timeout: 30, "the status to show the stopped printer") {
            let report = FolderStatus.report(for: config)
            return report.contains("print → queue station: UNAVAILABLE (printer says: the printer station is stopped")
                && report.contains("waiting: 3") && report.contains("doc1.pdf: ")
        }
        try cups.tool("cupsenable", ["station"])
        waitUntil(timeout: 60, "three printed jobs") { recorder.outcomes.count == 3 }
        XCTAssertTrue(recorder.outcomes.allSatisfy(\.succeeded))
        XCTAssertEqual(captures().count, 3)
        waitUntil(timeout: 30, "the status to show the printer back") {
            let report = FolderStatus.report(for: config)
            return report.contains("print → queue station: available") && !report.contains("waiting:")
        }
    }

    /// cupsreject: documents wait and print once the queue accepts again.
    func testRejectingQueueMakesDocumentsWaitThenPrint() throws {
        try cups.tool("cupsreject", ["station"])
        let recorder = Recorder()
        let service = try makeService("print.printer = station", recorder: recorder)
        service.start()
        defer { service.stop() }
        try drop(TestPDF(pages: 2), as: "a.pdf")
        waitUntil(timeout: 60, "the waiting reason") { recorder.logText.contains("not accepting jobs") }
        XCTAssertTrue(recorder.outcomes.isEmpty)
        try cups.tool("cupsaccept", ["station"])
        waitUntil(timeout: 60, "the printed job") { recorder.outcomes.count == 1 }
        XCTAssertEqual(recorder.outcomes.first?.succeeded, true)
        XCTAssertEqual(captures().count, 1)
    }

    /// A queue that does not exist yet: documents wait, the reason names the
    /// queue, and they print once it is created.
    func testMissingQueueWaitsUntilCreated() throws {
        let recorder = Recorder()
        let service = try makeService("print.printer = later", recorder: recorder)
        service.start()
        defer { service.stop() }
        try drop(TestPDF(pages: 1), as: "a.pdf")
        waitUntil(timeout: 60, "the missing-queue reason") { recorder.logText.contains("no queue named \"later\"") }
        XCTAssertTrue(recorder.outcomes.isEmpty)
        try cups.addQueue("later")
        waitUntil(timeout: 60, "the printed job") { recorder.outcomes.count == 1 }
        XCTAssertEqual(recorder.outcomes.first?.succeeded, true)
        XCTAssertEqual(captures("later").count, 1)
    }

    /// A job CUPS aborts (the backend fails) → failed/ with CUPS's own words.
    func testAbortedJobFailsWithCUPSReason() throws {
        try cups.addQueue("broken", ["--fail"])
        let recorder = Recorder()
        let service = try makeService("print.printer = broken", recorder: recorder)
        service.start()
        defer { service.stop() }
        try drop(TestPDF(pages: 1), as: "a.pdf")
        waitUntil(timeout: 60, "the failed job") { recorder.outcomes.count == 1 }
        let failure = try XCTUnwrap(recorder.outcomes.first?.failure)
        XCTAssertEqual(failure.step, .print)
        XCTAssertTrue(failure.reason.contains("aborted"), failure.reason)
        let error = try String(contentsOfFile: drop + "/failed/a.pdf.error.txt", encoding: .utf8)
        XCTAssertTrue(error.contains("CUPS job"), error)
    }

    /// cupsd killed and restarted while documents flow: nothing lost, nothing
    /// printed twice.
    func testCupsdKilledMidRunLosesNothingAndPrintsNothingTwice() throws {
        let recorder = Recorder()
        let service = try makeService("print.printer = station", recorder: recorder)
        service.start()
        defer { service.stop() }
        for i in 1...5 { try drop(TestPDF(pages: 1, title: "first \(i)"), as: "first\(i).pdf") }
        waitUntil(timeout: 60, "the first five printed") { recorder.outcomes.count == 5 }
        try cups.kill9()
        for i in 1...5 { try drop(TestPDF(pages: 1, title: "second \(i)"), as: "second\(i).pdf") }
        waitUntil(timeout: 60, "the reason that cupsd is down") { recorder.logText.contains("cupsd is not reachable") }
        XCTAssertEqual(recorder.outcomes.count, 5, "nothing fails while cupsd is down")
        try cups.start()
        waitUntil(timeout: 90, "all ten printed") { recorder.outcomes.count == 10 }
        XCTAssertTrue(recorder.outcomes.allSatisfy(\.succeeded), recorder.logText)
        let titles = captures().compactMap { name -> String? in
            guard let data = FileManager.default.contents(atPath: "\(cups.dir)/printed/station/\(name)"),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
            return (object["title"] as? String)?.components(separatedBy: " [").first
        }
        XCTAssertEqual(titles.count, 10, "each document printed exactly once")
        XCTAssertEqual(Set(titles).count, 10, "no document printed twice: \(titles)")
    }

    /// The service dies after CUPS took the job; the restarted service follows
    /// that job (by its journaled id) instead of printing again.
    func testRestartFollowsSubmittedJobInsteadOfReprinting() throws {
        try cups.addQueue("slow", ["--slow", "2"])
        let first = Recorder()
        let service = try makeService("print.printer = slow", recorder: first)
        service.start()
        try drop(TestPDF(pages: 1, title: "once"), as: "once.pdf")
        waitUntil(timeout: 60, "the job to be submitted") { first.logText.contains("waiting") || jobIsSubmitted() }
        waitUntil(timeout: 60, "the CUPS job id in the journal") { jobIsSubmitted() }
        service.stop()
        XCTAssertTrue(first.outcomes.isEmpty, "stopped before CUPS finished")
        let second = Recorder()
        let restarted = try makeService("print.printer = slow", recorder: second)
        restarted.start()
        defer { restarted.stop() }
        waitUntil(timeout: 60, "the followed job to finish") { second.outcomes.count == 1 }
        XCTAssertEqual(second.outcomes.first?.succeeded, true)
        XCTAssertEqual(captures("slow").count, 1, "printed exactly once")
        XCTAssertTrue(second.logText.contains("resuming once.pdf"))
    }

    /// The service died after journaling the job name but before CUPS's answer
    /// was journaled: the restart finds the job by name and does not resubmit.
    func testRestartFindsJobByNameWhenIdWasNotJournaled() throws {
        try cups.addQueue("slow", ["--slow", "2"])
        let first = Recorder()
        let service = try makeService("print.printer = slow", recorder: first)
        service.start()
        try drop(TestPDF(pages: 1, title: "named"), as: "named.pdf")
        waitUntil(timeout: 60, "the CUPS job id in the journal") { jobIsSubmitted() }
        service.stop()
        // Forget CUPS's answer, as if the service died right before writing it.
        let kept = journalRecords(at: journalPath).filter { $0.record.event != .printSubmitted }
        XCTAssertTrue(kept.contains { $0.record.event == .printSubmitting }, "the job name is journaled")
        try Data(JournalFile.bytes(of: kept)).write(to: URL(fileURLWithPath: journalPath), options: .atomic)
        let second = Recorder()
        let restarted = try makeService("print.printer = slow", recorder: second)
        restarted.start()
        defer { restarted.stop() }
        waitUntil(timeout: 60, "the found job to finish") { second.outcomes.count == 1 }
        XCTAssertEqual(second.outcomes.first?.succeeded, true)
        XCTAssertEqual(captures("slow").count, 1, "not printed a second time")
    }

    /// A job that never finishes ends at print.timeout: cancelled in CUPS, failed here.
    func testPrintTimeoutCancelsAndFails() throws {
        try cups.addQueue("stuck", ["--slow", "60"])
        let recorder = Recorder()
        let service = try makeService("print.printer = stuck\nprint.timeout = 1s", recorder: recorder)
        service.start()
        defer { service.stop() }
        try drop(TestPDF(pages: 1), as: "late.pdf")
        waitUntil(timeout: 60, "the timed-out job") { recorder.outcomes.count == 1 }
        let failure = try XCTUnwrap(recorder.outcomes.first?.failure)
        XCTAssertTrue(failure.reason.contains("print.timeout"), failure.reason)
        XCTAssertTrue(FileManager.default.fileExists(atPath: drop + "/failed/late.pdf.error.txt"))
        XCTAssertTrue(captures("stuck").isEmpty)
    }

    /// A PDF that allows only low-resolution printing is printed, with a warning.
    func testLowResolutionOnlyPrintsWithWarning() throws {
        let corpus = try Corpus.require()
        let recorder = Recorder()
        let service = try makeService("print.printer = station\npassword = view", recorder: recorder)
        service.start()
        defer { service.stop() }
        XCTAssertTrue(copyfile(corpus + "/enc--qpdf--enc-XI-R6,V5,U=view,O=master.pdf", drop + "/lowres.pdf"))
        waitUntil(timeout: 60, "the printed job") { recorder.outcomes.count == 1 }
        let outcome = try XCTUnwrap(recorder.outcomes.first)
        XCTAssertTrue(outcome.succeeded, "\(String(describing: outcome.failure))")
        XCTAssertTrue(outcome.warnings.contains { $0.contains("low-resolution") }, "\(outcome.warnings)")
        XCTAssertEqual(captures().count, 1)
        let printed = try XCTUnwrap(cups.capture(queue: "station", job: 1))
        XCTAssertFalse(PDFBytes.contains([UInt8](printed.document), "/Encrypt"), "printed decrypted")
    }

    /// The journal of every job of the test instance in the drop folder.
    private var journalPath: String { instancePath(of: drop) + "/" + JournalFile.fileName }

    private func jobIsSubmitted() -> Bool {
        journalRecords(at: journalPath).contains { $0.record.event == .printSubmitted }
    }
}

private func copyfile(_ from: String, _ to: String) -> Bool {
    guard let data = FileManager.default.contents(atPath: from) else { return false }
    let staging = to + ".part"
    return FileManager.default.createFile(atPath: staging, contents: data) && rename(staging, to) == 0
}
