import Foundation
import XCTest
@testable import HotFolderKit

/// What becomes of a document: exports, collisions, done/ and failed/, error
/// files, recovery after a restart, and the one-shot `process`.
final class ServiceTests: XCTestCase {
    func pdf(_ n: Int, pages: Int = 1, title: String? = nil) -> [UInt8] {
        var pdf = TestPDF(pages: pages, title: title)
        pdf.trailerComment = "document \(n)"
        return pdf.bytes
    }

    // MARK: - collisions

    func testCollisionRename() throws {
        let h = try ServiceHarness("export.collision = rename\n") { paths in
            try FileManager.default.createDirectory(atPath: paths.out, withIntermediateDirectories: true)
            writeFile(paths.out + "/doc.pdf", "an older export")
        }
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/doc.pdf", pdf(1, pages: 1))
        h.waitForOutcomes(1)
        writeFile(h.drop + "/doc.pdf", pdf(2, pages: 2))
        h.waitForOutcomes(2)
        XCTAssertEqual(h.recorder.succeeded.count, 2, h.recorder.logText)
        XCTAssertEqual(readText(h.out + "/doc.pdf"), "an older export", "never overwritten")
        XCTAssertEqual(try summarize(h.out + "/doc (2).pdf").pages, 1)
        XCTAssertEqual(try summarize(h.out + "/doc (3).pdf").pages, 2)
        XCTAssertEqual(h.recorder.outcomes.map(\.delivered), [[h.out + "/doc (2).pdf"], [h.out + "/doc (3).pdf"]])
        XCTAssertEqual(allEntries(in: h.out), ["doc (2).pdf", "doc (3).pdf", "doc.pdf"], "no temporary file left")
    }

    func testCollisionReplace() throws {
        let h = try ServiceHarness("export.collision = replace\n") { paths in
            try FileManager.default.createDirectory(atPath: paths.out, withIntermediateDirectories: true)
            writeFile(paths.out + "/doc.pdf", "an older export")
        }
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/doc.pdf", pdf(1, pages: 3))
        h.waitForOutcomes(1)
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(try summarize(h.out + "/doc.pdf").pages, 3)
        XCTAssertEqual(allEntries(in: h.out), ["doc.pdf"])
    }

    func testCollisionFail() throws {
        let h = try ServiceHarness("export.collision = fail\n") { paths in
            try FileManager.default.createDirectory(atPath: paths.out, withIntermediateDirectories: true)
            writeFile(paths.out + "/doc.pdf", "an older export")
        }
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/doc.pdf", pdf(1))
        h.waitForOutcomes(1)
        let outcome = try XCTUnwrap(h.recorder.outcomes.first)
        XCTAssertEqual(outcome.failure?.step, .export)
        XCTAssertTrue(outcome.failure?.reason.contains("already exists") == true, "\(String(describing: outcome.failure))")
        XCTAssertEqual(outcome.originalNow, h.failed + "/doc.pdf")
        XCTAssertEqual(readText(h.out + "/doc.pdf"), "an older export")
        XCTAssertEqual(allEntries(in: h.out), ["doc.pdf"], "no temporary file left in the export folder")
        XCTAssertEqual(readBytes(h.failed + "/doc.pdf"), pdf(1))
        let error = h.errorText(for: "doc.pdf")
        XCTAssertTrue(error.contains("What failed: export"), error)
        XCTAssertTrue(error.contains("already exists"), error)
        XCTAssertTrue(error.contains("export.collision = fail"), error)
        XCTAssertFalse(exists(h.done + "/doc.pdf"))
    }

    // MARK: - after success, repeated names

    func testAfterSuccessDelete() throws {
        let h = try ServiceHarness("after-success = delete\n")
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/gone.pdf", pdf(1))
        h.waitForOutcomes(1)
        h.waitUntilIdle()
        let outcome = try XCTUnwrap(h.recorder.outcomes.first)
        XCTAssertTrue(outcome.succeeded)
        XCTAssertNil(outcome.originalNow)
        XCTAssertEqual(files(in: h.out), ["gone.pdf"])
        XCTAssertEqual(files(in: h.done), [])
        XCTAssertEqual(files(in: h.drop), [], "the original is deleted once delivered")
    }

    func testSameNameAgainIsANewDocument() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/again.pdf", pdf(1, pages: 1))
        h.waitForOutcomes(1)
        writeFile(h.drop + "/again.pdf", pdf(2, pages: 2))
        h.waitForOutcomes(2)
        writeFile(h.drop + "/again.pdf", pdf(3, pages: 3))
        h.waitForOutcomes(3)
        let outcomes = h.recorder.outcomes
        XCTAssertEqual(outcomes.filter(\.succeeded).count, 3, h.recorder.logText)
        XCTAssertEqual(Set(outcomes.map(\.job)).count, 3, "three jobs")
        XCTAssertEqual(files(in: h.done), ["again (2).pdf", "again (3).pdf", "again.pdf"])
        XCTAssertEqual(readBytes(h.done + "/again (3).pdf"), pdf(3, pages: 3))
        XCTAssertEqual(try summarize(h.out + "/again (2).pdf").pages, 2)
        XCTAssertEqual(try summarize(h.out + "/again (3).pdf").pages, 3)
    }

    // MARK: - failures

    func testEveryFailureLeavesAnErrorFileAndTheServiceKeepsRunning() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        h.start()
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array(repeating: 1, count: 200)
        let bad: [(String, [UInt8], String, String)] = [
            ("empty.pdf", [], "identify the document", "the file is empty (0 bytes)"),
            ("picture.pdf", png, "identify the document", "PNG image"),
            ("truncated.pdf", Array(pdf(1, pages: 4).prefix(60)), "open the document", "damaged"),
            ("random.pdf", randomBytes(8192, seed: 99), "identify the document", "unrecognized binary data"),
            ("text.pdf", Array("just some words\n".utf8), "identify the document", "plain text"),
        ]
        for (name, bytes, _, _) in bad { writeFile(h.drop + "/" + name, bytes) }
        h.waitForOutcomes(bad.count)
        for (name, bytes, step, reason) in bad {
            let outcome = try XCTUnwrap(h.recorder.outcomes(for: name).first, name)
            XCTAssertFalse(outcome.succeeded, name)
            XCTAssertEqual(outcome.failure?.step.rawValue, step, name)
            XCTAssertTrue(outcome.failure?.reason.contains(reason) == true, "\(name): \(String(describing: outcome.failure))")
            XCTAssertEqual(outcome.originalNow, h.failed + "/" + name)
            XCTAssertEqual(readBytes(h.failed + "/" + name), bytes, "\(name) is kept unchanged in failed/")
            let text = h.errorText(for: name)
            XCTAssertTrue(text.contains("hotfolder could not process \"\(name)\""), text)
            XCTAssertTrue(text.contains("What failed: \(step)"), text)
            XCTAssertTrue(text.contains(reason), text)
            XCTAssertTrue(text.contains("What to do:"), text)
            XCTAssertTrue(text.contains("Folder:      test (\(h.drop))"), text)
            XCTAssertTrue(text.contains("Job:         \(outcome.job)"), text)
        }
        XCTAssertEqual(files(in: h.out), [], "nothing exported for a failed document")
        XCTAssertTrue(h.recorder.logs.contains { $0.level == .error && $0.message.contains("failed: picture.pdf") })

        writeFile(h.drop + "/fine.pdf", pdf(1))
        h.waitForOutcomes(bad.count + 1)
        XCTAssertTrue(h.recorder.outcomes(for: "fine.pdf").first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(files(in: h.out), ["fine.pdf"])
    }

    /// A FIFO or a symbolic link dropped into the folder fails with a reason;
    /// the service neither hangs on the FIFO nor follows the link.
    func testFIFOAndSymlinkFailWithReasons() throws {
        let h = try ServiceHarness(settle: "100ms")
        defer { h.stop() }
        let secret = h.temp.path + "/secret.pdf"
        writeFile(secret, pdf(1))
        h.start()
        XCTAssertEqual(mkfifo(h.drop + "/pipe.pdf", 0o644), 0)
        XCTAssertEqual(symlink(secret, h.drop + "/link.pdf"), 0)
        h.waitForOutcomes(2)
        XCTAssertTrue(h.recorder.outcomes(for: "pipe.pdf").first?.failure?.reason.contains("FIFO") == true, h.recorder.logText)
        XCTAssertTrue(h.recorder.outcomes(for: "link.pdf").first?.failure?.reason.contains("symbolic link") == true, h.recorder.logText)
        XCTAssertTrue(exists(h.failed + "/pipe.pdf.error.txt"))
        XCTAssertTrue(exists(h.failed + "/link.pdf.error.txt"))
        XCTAssertEqual(readBytes(secret), pdf(1), "the link's target is untouched")
        XCTAssertEqual(files(in: h.out), [], "nothing behind the link was exported")
        writeFile(h.drop + "/fine.pdf", pdf(2))
        h.waitForOutcomes(3)
        XCTAssertTrue(h.recorder.outcomes(for: "fine.pdf").first?.succeeded == true)
    }

    func testSameFailingNameTwiceKeepsBothErrorFiles() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/broken.pdf", "first")
        h.waitForOutcomes(1)
        writeFile(h.drop + "/broken.pdf", [UInt8]())
        h.waitForOutcomes(2)
        XCTAssertEqual(files(in: h.failed), ["broken (2).pdf", "broken (2).pdf.error.txt", "broken.pdf", "broken.pdf.error.txt"])
        XCTAssertTrue(h.errorText(for: "broken.pdf").contains("plain text"))
        XCTAssertTrue(h.errorText(for: "broken (2).pdf").contains("empty"))
    }

    func testWarningsAreReportedNotSilenced() throws {
        let h = try ServiceHarness("export.annotations = flatten\n")
        defer { h.stop() }
        h.start()
        var doc = TestPDF(pages: 1)
        doc.annotations = [0: [.text("note")]]
        writeFile(h.drop + "/noted.pdf", doc.bytes)
        h.waitForOutcomes(1)
        let outcome = try XCTUnwrap(h.recorder.outcomes.first)
        XCTAssertTrue(outcome.succeeded)
        XCTAssertTrue(outcome.warnings.contains { $0.contains("Text annotation has no appearance stream") }, "\(outcome.warnings)")
        XCTAssertTrue(h.recorder.logs.contains { $0.level == .warning && $0.message.contains("no appearance stream") }, h.recorder.logText)
    }

    func testPasswordProtectedCorpusFile() throws {
        let corpus = try Corpus.require()
        let h = try ServiceHarness()
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/locked.pdf", readBytes(corpus + "/enc--qpdf--20-pages.pdf"))
        h.waitForOutcomes(1)
        XCTAssertTrue(h.errorText(for: "locked.pdf").contains("the PDF is protected by a password"))

        let right = try ServiceHarness("password = user\n")
        defer { right.stop() }
        right.start()
        writeFile(right.drop + "/locked.pdf", readBytes(corpus + "/enc--qpdf--20-pages.pdf"))
        right.waitForOutcomes(1)
        XCTAssertTrue(right.recorder.outcomes.first?.succeeded == true, right.recorder.logText)
        let summary = try summarize(right.out + "/locked.pdf")
        XCTAssertEqual(summary.pages, 20)
        XCTAssertFalse(summary.encrypted)
    }

    /// A name near the 255-byte limit still gets its error file.
    func testLongFileNameStillGetsAnErrorFile() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        h.start()
        let name = String(repeating: "n", count: 246) + ".pdf" // 250 bytes: "<name>.error.txt" would be 260
        writeFile(h.drop + "/" + name, "not a pdf")
        h.waitForOutcomes(1)
        XCTAssertTrue(exists(h.failed + "/" + name), "the original is in failed/")
        let errorFiles = files(in: h.failed).filter { $0.hasSuffix(".error.txt") }
        XCTAssertEqual(errorFiles.count, 1, "an error file next to it: \(files(in: h.failed))\n\(h.recorder.logText)")
        XCTAssertTrue(errorFiles.first.map { readText(h.failed + "/" + $0).contains("plain text") } ?? false)
        XCTAssertEqual(jobFolders(of: h.drop), [], "the job is finished, not parked")
    }

    /// The second document with a name near the limit cannot be "name (2).pdf"
    /// in done/; it must still finish instead of waiting forever.
    func testLongFileNameTwiceStillFinishes() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        h.start()
        let name = String(repeating: "m", count: 250) + ".pdf" // 254 bytes
        writeFile(h.drop + "/" + name, pdf(1))
        h.waitForOutcomes(1)
        writeFile(h.drop + "/" + name, pdf(2))
        waitUntil(timeout: 30, "the second job to end or to wait") {
            h.recorder.outcomes.count == 2 || h.recorder.logs.contains { $0.message.contains(" waits: ") }
        }
        XCTAssertEqual(h.recorder.outcomes.count, 2, "the second document is stuck:\n\(h.recorder.logText)")
        XCTAssertEqual(files(in: h.done).count, 2, "\(files(in: h.done))\n\(h.recorder.logText)")
        XCTAssertTrue(files(in: h.done).allSatisfy { $0.utf8.count <= 255 })
    }

    // MARK: - naming through the service

    func testExportNamesFromTitles() throws {
        let h = try ServiceHarness("export.name = {title|stem}.pdf\n")
        defer { h.stop() }
        h.start()
        let long = String(repeating: "Überlang ", count: 1200)
        let titles: [(String, String?)] = [
            ("a.pdf", "../../etc/passwd"),
            ("b.pdf", "Grüße — 日本語"),
            ("c.pdf", "invoice\u{202E}fdp.exe"),
            ("d.pdf", long),
            ("e.pdf", nil),
            ("f.pdf", "...hidden"),
            ("g.pdf", "report.pdf"),
        ]
        for (n, (name, title)) in titles.enumerated() { writeFile(h.drop + "/" + name, pdf(n, title: title)) }
        h.waitForOutcomes(titles.count)
        XCTAssertEqual(h.recorder.succeeded.count, titles.count, h.recorder.logText)
        let exported = allEntries(in: h.out)
        XCTAssertTrue(exported.contains("_.._etc_passwd.pdf"), "\(exported)")
        XCTAssertTrue(exported.contains("Grüße — 日本語.pdf"), "\(exported)")
        XCTAssertTrue(exported.contains("invoicefdp.exe.pdf"), "\(exported)")
        XCTAssertTrue(exported.contains("e.pdf"), "no title: the stem")
        XCTAssertTrue(exported.contains("hidden.pdf"), "\(exported)")
        XCTAssertTrue(exported.contains("report.pdf"), "the extension is not doubled: \(exported)")
        XCTAssertTrue(exported.allSatisfy { $0.utf8.count <= 255 && !$0.hasPrefix(".") }, "\(exported)")
        XCTAssertTrue(exported.contains { $0.hasPrefix("Überlang Überlang") && $0.hasSuffix(".pdf") })
        XCTAssertEqual(exported.count, titles.count)
        XCTAssertEqual(files(in: h.temp.path + "/etc"), [], "nothing escaped the export folder")
    }

    func testExportNameTemplateWithFolderAndDate() throws {
        let h = try ServiceHarness("export.name = {folder}-{stem}-{date}\n")
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/scan.pdf", pdf(1))
        h.waitForOutcomes(1)
        let name = try XCTUnwrap(files(in: h.out).first)
        XCTAssertNotNil(name.wholeMatch(of: /test-scan-\d{4}-\d{2}-\d{2}\.pdf/), name)
    }

    func testOriginalFormatThroughTheService() throws {
        let h = try ServiceHarness("export.format = original\nexport.annotations = flatten\n")
        defer { h.stop() }
        h.start()
        var annotated = TestPDF(pages: 2)
        annotated.annotations = [0: [.square("sq")]]
        writeFile(h.drop + "/Keep.PDF", annotated.bytes)
        writeFile(h.drop + "/photo.jpg", [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 3, count: 50))
        h.waitForOutcomes(2)
        XCTAssertEqual(h.recorder.succeeded.count, 2, h.recorder.logText)
        XCTAssertEqual(readBytes(h.out + "/Keep.PDF"), annotated.bytes, "byte-identical")
        XCTAssertEqual(readBytes(h.out + "/photo.jpg"), [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 3, count: 50))
    }

    // MARK: - restart recovery

    /// A job claimed by an earlier run (service stopped before it ran) resumes at start.
    func testClaimedJobResumesAtStart() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        writeFile(h.drop + "/interrupted.pdf", pdf(1, pages: 2))
        let area = try JobArea.open(path: instancePath(of: h.drop))
        guard case .claimed = try JobFolder.claim("interrupted.pdf", from: try Directory(path: h.drop), relativeFolder: "", into: area) else {
            return XCTFail("not claimed")
        }
        XCTAssertFalse(exists(h.drop + "/interrupted.pdf"))
        h.start()
        h.waitForOutcomes(1)
        h.waitUntilIdle()
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(files(in: h.out), ["interrupted.pdf"])
        XCTAssertEqual(files(in: h.done), ["interrupted.pdf"])
        XCTAssertTrue(h.recorder.logs.contains { $0.message.contains("resuming interrupted.pdf") })
    }

    /// A job that was exported before the restart is not exported twice.
    func testExportedJobIsNotDeliveredTwice() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        let config = h.service.configuration
        let folder = try XCTUnwrap(config.folder(named: "test"))
        writeFile(h.drop + "/once.pdf", pdf(1))
        let area = try JobArea.open(path: instancePath(of: h.drop))
        guard case .claimed(let job) = try JobFolder.claim("once.pdf", from: try Directory(path: h.drop), relativeFolder: "", into: area) else {
            return XCTFail("not claimed")
        }
        let result = try Pipeline(folder: folder, job: job).run()
        var generated = JournalRecord(.generated)
        generated.result = result
        try job.journal.append(generated)
        let sharing = try XCTUnwrap(folder.export)
        let out = try Directory.create(path: h.out)
        let values = Pipeline(folder: folder, job: job).templateValues(result.facts)
        let delivered = try deliverExport(ExportDestination(sharing: sharing, folder: out), try XCTUnwrap(result.outputs.first), job: job, values: values)
        XCTAssertEqual(delivered, ["once.pdf"])
        // ... and here the earlier run stopped.
        h.start()
        h.waitForOutcomes(1)
        h.waitUntilIdle()
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(allEntries(in: h.out), ["once.pdf"], "delivered once")
        XCTAssertEqual(files(in: h.done), ["once.pdf"])
    }

    /// Claims and generates a job as an earlier run would have, and asks the
    /// export once: its file is journaled as being exported and waits, in the
    /// job, for the sync before its rename into place.
    private func jobWaitingForItsExportSync(_ h: ServiceHarness, _ name: String) throws -> (JobFolder, String) {
        let folder = try XCTUnwrap(h.service.configuration.folder(named: "test"))
        writeFile(h.drop + "/" + name, pdf(1, pages: 3))
        let area = try JobArea.open(path: instancePath(of: h.drop))
        guard case .claimed(let job) = try JobFolder.claim(name, from: try Directory(path: h.drop), relativeFolder: "", into: area) else {
            throw XCTSkip("not claimed")
        }
        let result = try Pipeline(folder: folder, job: job).run()
        var generated = JournalRecord(.generated)
        generated.result = result
        try job.journal.append(generated)
        let output = try XCTUnwrap(result.outputs.first)
        let destination = ExportDestination(sharing: try XCTUnwrap(folder.export), folder: try Directory.create(path: h.out))
        let values = Pipeline(folder: folder, job: job).templateValues(result.facts)
        XCTAssertEqual(try destination.deliver(output, job: job, values: values), .needsSync)
        try job.journal.file?.flush(sync: true)
        let staged = try XCTUnwrap(output.files.first).file
        XCTAssertTrue(job.exists(staged), "on the same file system the file waits in the job (no temporary copy)")
        XCTAssertEqual(allEntries(in: h.out), [], "nothing in the export folder before the sync")
        return (job, job.directory.child(job.name(staged)))
    }

    /// Stopped after the export was journaled, before its rename: placed once at the next start.
    func testExportWaitingForItsSyncIsPlacedOnceAfterARestart() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        let (_, waiting) = try jobWaitingForItsExportSync(h, "pending.pdf")
        h.start()
        h.waitForOutcomes(1)
        h.waitUntilIdle()
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(allEntries(in: h.out), ["pending.pdf"])
        XCTAssertEqual(try summarize(h.out + "/pending.pdf").pages, 3)
        XCTAssertFalse(exists(waiting))
        XCTAssertEqual(files(in: h.done), ["pending.pdf"])
    }

    /// Stopped right after the rename into place, its record lost: the file no
    /// longer waiting in the job tells that it was placed, so it is not placed twice.
    func testExportRenamedButNotRecordedIsNotDeliveredTwice() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        let (_, waiting) = try jobWaitingForItsExportSync(h, "renamed.pdf")
        XCTAssertEqual(rename(waiting, h.out + "/renamed.pdf"), 0)
        h.start()
        h.waitForOutcomes(1)
        h.waitUntilIdle()
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(allEntries(in: h.out), ["renamed.pdf"], "delivered once, no \"renamed (2).pdf\"")
        XCTAssertEqual(files(in: h.done), ["renamed.pdf"])
    }

    func testFinishedJobLeftoversAreCleanedUp() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        // A job whose original already went to failed/ but whose error file is
        // missing: its records are in the journal, nothing of it in jobs/ but a ticket.
        let area = try JobArea.open(path: instancePath(of: h.drop))
        let id = "20240101T000000-leftover"
        let journal = Journal(job: id, file: area.journal)
        var failing = JournalRecord(.failing)
        failing.name = "lost.pdf"
        failing.failure = JobFailure(.identify, "it was not a PDF", remedy: "Drop a PDF.")
        try journal.append(failing)
        writeFile(area.shard(for: id).child("\(id).ticket"), "copies = 2\n")
        try FileManager.default.createDirectory(atPath: h.failed, withIntermediateDirectories: true)
        writeFile(h.failed + "/lost.pdf", "x")
        h.start()
        waitUntil(timeout: 30, "the leftover job to be closed") { jobFolders(of: h.drop).isEmpty && area.journal.unfinishedJobs().isEmpty }
        XCTAssertTrue(h.errorText(for: "lost.pdf").contains("it was not a PDF"))
        XCTAssertEqual(readText(h.failed + "/lost.pdf.ticket"), "copies = 2\n", "the ticket went where its document went")
    }

    // MARK: - one-shot processing

    func testProcessOneFile() throws {
        let temp = TemporaryFolder("hf-process")
        defer { withExtendedLifetime(temp) {} } // the folder goes only when the test ends
        _ = temp.sub("drop")
        let elsewhere = temp.sub("elsewhere")
        let config = try configuration("[service]\ninstance = \(testInstance)\n[folder test]\npath = drop\nexport.to = out\nexport.pages = last\n", in: temp)
        let service = HotFolderService(configuration: config, logToStandardError: false)
        defer { service.stop() }
        writeFile(elsewhere + "/three.pdf", pdf(1, pages: 3))
        let outcome = try service.process(file: elsewhere + "/three.pdf", folder: "test")
        XCTAssertTrue(outcome.succeeded, "\(String(describing: outcome.failure))")
        XCTAssertEqual(outcome.delivered, [temp.path + "/out/three.pdf"])
        XCTAssertEqual(PDFBytes.pageMarkers(readBytes(temp.path + "/out/three.pdf")), [3])
        XCTAssertEqual(outcome.originalNow, temp.path + "/drop/done/three.pdf")
        XCTAssertFalse(exists(elsewhere + "/three.pdf"), "claimed like a dropped file")

        writeFile(elsewhere + "/bad.pdf", "nope")
        let failed = try service.process(file: elsewhere + "/bad.pdf", folder: "test")
        XCTAssertEqual(failed.failure?.step, .identify)
        XCTAssertTrue(exists(temp.path + "/drop/failed/bad.pdf.error.txt"))

        XCTAssertThrowsError(try service.process(file: elsewhere + "/missing.pdf", folder: "test")) { error in
            XCTAssertTrue("\(error)".contains("no such file"), "\(error)")
        }
        XCTAssertThrowsError(try service.process(file: elsewhere + "/three.pdf", folder: "nope")) { error in
            XCTAssertTrue("\(error)".contains("no folder named nope"), "\(error)")
        }

        // A ticket is not a document; processed with its document, it is used.
        writeFile(elsewhere + "/two.pdf", pdf(1, pages: 2))
        writeFile(elsewhere + "/two.pdf.ticket", "name = from-ticket\n")
        XCTAssertThrowsError(try service.process(file: elsewhere + "/two.pdf.ticket", folder: "test")) { error in
            XCTAssertTrue("\(error)".contains("is a job ticket, not a document: process its document two.pdf"), "\(error)")
        }
        XCTAssertTrue(exists(elsewhere + "/two.pdf.ticket"), "the ticket was left alone")
        let ticketed = try service.process(file: elsewhere + "/two.pdf", folder: "test")
        XCTAssertTrue(ticketed.succeeded, "\(String(describing: ticketed.failure))")
        XCTAssertEqual(ticketed.delivered, [temp.path + "/out/from-ticket.pdf"], "named by the ticket")
        XCTAssertFalse(exists(elsewhere + "/two.pdf.ticket"), "the ticket went with its document")
        XCTAssertTrue(exists(temp.path + "/drop/done/two.pdf.ticket"))
    }

    // MARK: - another file system

    /// /dev/shm on another device than /tmp (a rename between them fails with EXDEV).
    func requireAnotherFileSystem() throws {
        var local = stat()
        var shm = stat()
        guard stat("/tmp", &local) == 0, stat("/dev/shm", &shm) == 0, local.st_dev != shm.st_dev, access("/dev/shm", W_OK) == 0 else {
            throw XCTSkip("no writable /dev/shm on another file system than /tmp")
        }
    }

    /// The export folder on another file system: staged by copy, still atomic.
    func testExportToAnotherFileSystem() throws {
        try requireAnotherFileSystem()
        let other = "/dev/shm/hf-export-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: other) }
        let h = try ServiceHarness("export.to = \(other)\n")
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/far.pdf", pdf(1, pages: 2))
        h.waitForOutcomes(1)
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(allEntries(in: other), ["far.pdf"], "no temporary file left behind")
        XCTAssertEqual(try summarize(other + "/far.pdf").pages, 2)
    }

    /// done/ and failed/ on another file system (an archive disk): originals,
    /// and a failed one's reason, get there by copy; none stays behind in the
    /// job area and no hidden copy is left.
    func testDoneAndFailedOnAnotherFileSystem() throws {
        try requireAnotherFileSystem()
        let other = "/dev/shm/hf-archive-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: other) }
        // A good.pdf is there already: the copy takes the next free name.
        try FileManager.default.createDirectory(atPath: other + "/done", withIntermediateDirectories: true)
        writeFile(other + "/done/good.pdf", Array("an earlier one".utf8))
        let h = try ServiceHarness("done = \(other)/done\nfailed = \(other)/failed\n")
        defer { h.stop() }
        writeFile(h.drop + "/good.pdf", pdf(1, pages: 2))
        var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000_000, tv_nsec: 0)]
        XCTAssertEqual(utimensat(AT_FDCWD, h.drop + "/good.pdf", &times, 0), 0)
        h.start()
        writeFile(h.drop + "/bad.pdf", Array("not a PDF at all".utf8))
        h.waitForOutcomes(2)
        XCTAssertEqual(allEntries(in: other + "/done"), ["good (2).pdf", "good.pdf"], h.recorder.logText)
        var st = stat()
        XCTAssertEqual(stat(other + "/done/good (2).pdf", &st), 0)
        XCTAssertEqual(st.st_mtim.tv_sec, 1_000_000_000, "the copy keeps the original's time")
        XCTAssertEqual(allEntries(in: other + "/failed"), ["bad.pdf", "bad.pdf.error.txt"], h.recorder.logText)
        XCTAssertTrue(readText(other + "/failed/bad.pdf.error.txt").contains("is not a PDF"))
        XCTAssertEqual(readBytes(other + "/done/good (2).pdf"), pdf(1, pages: 2))
        XCTAssertEqual(try summarize(h.out + "/good.pdf").pages, 2)
        XCTAssertEqual(jobFolders(of: h.drop), [], "nothing left in the job area")
    }

    /// `process` of a file on another file system: claimed by copy, the source removed.
    func testProcessAFileFromAnotherFileSystem() throws {
        try requireAnotherFileSystem()
        let source = "/dev/shm/hf-source-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).pdf"
        defer { try? FileManager.default.removeItem(atPath: source) }
        writeFile(source, pdf(1, pages: 3))
        let temp = TemporaryFolder("hf-process")
        defer { withExtendedLifetime(temp) {} } // the folder goes only when the test ends
        _ = temp.sub("drop")
        let config = try configuration("[service]\ninstance = \(testInstance)\n[folder test]\npath = drop\nexport.to = out\n", in: temp)
        let service = HotFolderService(configuration: config, logToStandardError: false)
        defer { service.stop() }
        let outcome = try service.process(file: source, folder: "test")
        XCTAssertTrue(outcome.succeeded, "\(String(describing: outcome.failure))")
        XCTAssertFalse(exists(source), "taken like a dropped file")
        let name = (source as NSString).lastPathComponent
        XCTAssertEqual(try summarize(temp.path + "/out/" + name).pages, 3)
        XCTAssertEqual(readBytes(temp.path + "/drop/done/" + name), pdf(1, pages: 3))
    }
}
