import Foundation
import Synchronization
import XCTest
@testable import HotFolderKit

/// Seed 002's features: a destination is available when every source says so
/// (folder policy, export folder, printer, the document); observers pause and
/// resume the work and keep `hotfolder status` current.
final class FeatureTests: XCTestCase {
    func board(_ h: ServiceHarness) -> StatusBoard.Snapshot? {
        StatusBoard.read(serviceArea: h.drop + "/.hotfolder", instance: testInstance)
    }

    func testAFullExportFolderPausesExportsAndStatusSaysWhy() throws {
        // Far more free space than any disk has: the export folder source says no.
        let h = try ServiceHarness("export.min-free = 1000000T\n")
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/wait.pdf", TestPDF(pages: 1).bytes)
        waitUntil(timeout: 30, "the status board to show the export folder unavailable") {
            board(h)?.destinations.first?.available == false && board(h)?.waiting.count == 1
        }
        let snapshot = try XCTUnwrap(board(h))
        XCTAssertEqual(snapshot.destinations.first?.source, "export folder")
        XCTAssertTrue(snapshot.destinations.first?.reason?.contains("less than export.min-free") == true, "\(snapshot.destinations)")
        XCTAssertTrue(snapshot.waiting.first?.reason.contains("less than export.min-free") == true)
        XCTAssertFalse(exists(h.out + "/wait.pdf"), "nothing exported while unavailable")
        XCTAssertEqual(jobFolders(of: h.drop).count, 1, "the document waits claimed, not failed")
        let status = FolderStatus.report(for: h.service.configuration)
        XCTAssertTrue(status.contains("export → \(h.out): UNAVAILABLE (export folder says: "), status)
        XCTAssertTrue(h.recorder.logText.contains("exporting paused, documents wait"), h.recorder.logText)
    }

    /// The document is exported but its original cannot go to done/ (the done
    /// folder is a file): the job waits with the reason, is not exported
    /// again while it waits, and finishes once done/ can be made.
    func testAnOriginalThatCannotGoToDoneWaitsAndIsNotExportedAgain() throws {
        let h = try ServiceHarness("done = archive\n") { paths in
            writeFile(paths.root + "/archive", "not a folder")
        }
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/kept.pdf", TestPDF(pages: 1).bytes)
        waitUntil(timeout: 30, "the job to wait for done/") {
            board(h)?.waiting.first?.reason.contains("the original cannot be moved to") == true
        }
        XCTAssertEqual(files(in: h.out), ["kept.pdf"])
        XCTAssertEqual(h.recorder.outcomes.count, 0, "not finished, not failed")
        // Retried with backoff meanwhile (after 0.5, 1, 2 s): still one export.
        rlHolds(for: 2.5, "one export while the job waits") { files(in: h.out) == ["kept.pdf"] && h.recorder.outcomes.isEmpty }
        XCTAssertEqual(unlink(h.temp.path + "/archive"), 0)
        XCTAssertEqual(mkdir(h.temp.path + "/archive", 0o755), 0)
        h.waitForOutcomes(1)
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(files(in: h.temp.path + "/archive"), ["kept.pdf"])
        XCTAssertEqual(files(in: h.out), ["kept.pdf"], "exported once")
    }

    /// With no service running, status counts the documents claimed and left
    /// to resume (not the job area's shard folders) and those not yet taken.
    func testStatusWithoutAServiceCountsClaimedDocuments() throws {
        let temp = TemporaryFolder("hf-status")
        let drop = temp.sub("drop")
        let config = try configuration("[service]\ninstance = \(testInstance)\n\n[folder test]\npath = drop\nexport.to = out\n", in: temp)
        let area = try JobArea.open(path: instancePath(of: drop))
        var status = FolderStatus.report(for: config)
        XCTAssertTrue(status.contains("claimed, to resume at the next start: 0"), status)
        for name in ["a.pdf", "b.pdf", "c.pdf"] {
            writeFile(drop + "/" + name, TestPDF(pages: 1).bytes)
        }
        for name in ["a.pdf", "b.pdf"] {
            guard case .claimed = try JobFolder.claim(name, from: try Directory(path: drop), relativeFolder: "", into: area) else {
                return XCTFail("\(name) vanished before it was claimed")
            }
        }
        status = FolderStatus.report(for: config)
        XCTAssertTrue(status.contains("not served right now"), status)
        XCTAssertTrue(status.contains("claimed, to resume at the next start: 2"), status)
        XCTAssertTrue(status.contains("not yet taken: 1"), status)
    }

    func testAnExportFolderThatIsAFileIsWaitedForAndTheDocumentGoesWhenItIsFixed() throws {
        let h = try ServiceHarness { paths in
            writeFile(paths.out, "not a folder")
        }
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/later.pdf", TestPDF(pages: 2).bytes)
        waitUntil(timeout: 30, "the document to wait for the export folder") {
            board(h)?.waiting.first?.reason.contains("is not a folder") == true
        }
        XCTAssertEqual(h.recorder.outcomes.count, 0)
        // Fixed by someone: the source notices by itself (probing with backoff) and the document goes.
        XCTAssertEqual(unlink(h.out), 0)
        h.waitForOutcomes(1)
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertTrue(exists(h.out + "/later.pdf"))
        XCTAssertTrue(h.recorder.logText.contains("export is available again"), h.recorder.logText)
        waitUntil(timeout: 10, "the status board to clear") { board(h)?.destinations.first?.available == true && board(h)?.waiting.isEmpty == true }
    }

    /// A service on `conf` in `temp` (reloadable: the file is rewritten and
    /// reloaded by the test), with memo.pdf dropped once it runs, and waiting
    /// until the status board says why the document waits.
    func serviceWithAWaitingMemo(_ temp: TemporaryFolder, _ conf: String, waitsFor reason: String) throws -> (HotFolderService, Recorder, String) {
        let file = temp.path + "/hf.conf"
        try conf.write(toFile: file, atomically: true, encoding: .utf8)
        let recorder = Recorder()
        let service = HotFolderService(configuration: try ServiceConfiguration.load(file: file), delegate: recorder, logToStandardError: false)
        service.start()
        writeFile(temp.path + "/drop/memo.pdf", TestPDF(pages: 1).bytes)
        waitUntil(timeout: 30, "the document to wait: \(reason)") {
            StatusBoard.read(serviceArea: temp.path + "/drop/.hotfolder", instance: testInstance)?.waiting.first?.reason.contains(reason) == true
        }
        return (service, recorder, file)
    }

    /// A job generated before a reload that puts {n} in the name gets its
    /// number when it resumes, not an empty one.
    func testAWaitingJobGetsANumberWhenAReloadAddsOne() throws {
        let temp = TemporaryFolder("hf-number")
        _ = temp.sub("drop")
        func text(_ export: String) -> String {
            "[service]\ninstance = \(testInstance)\n\n[folder numbered]\npath = drop\nsettle = 0\nexport.to = out\n\(export)\n"
        }
        // Far more free space than any disk has: the document waits, generated.
        let (service, recorder, file) = try serviceWithAWaitingMemo(temp, text("export.min-free = 1000000T"), waitsFor: "export.min-free")
        defer { service.stop() }
        try text("export.name = {n}-{stem}").write(toFile: file, atomically: true, encoding: .utf8)
        service.reload(try ServiceConfiguration.load(file: file))
        waitUntil(timeout: 60, "the document to be exported after the reload") { recorder.outcomes.count == 1 }
        XCTAssertTrue(recorder.outcomes.first?.succeeded == true, recorder.logText)
        XCTAssertEqual(regularFiles(in: temp.path + "/out"), ["1-memo.pdf"])
    }

    func testFolderPolicyPausesADestinationUntilAReloadAllowsIt() throws {
        let cups = try CUPSSandbox(queues: ["station"])
        let temp = TemporaryFolder("hf-policy")
        _ = temp.sub("drop")
        func text(_ allow: String) -> String {
            "[service]\ncups-server = \(cups.server)\ninstance = \(testInstance)\n\n[folder station]\npath = drop\nsettle = 0\nexport.to = out\nprint.printer = station\nallow = \(allow)\n"
        }
        let (service, recorder, file) = try serviceWithAWaitingMemo(temp, text("export"), waitsFor: "allow = export")
        defer { service.stop() }
        let area = temp.path + "/drop/.hotfolder"
        XCTAssertTrue(exists(temp.path + "/out/memo.pdf"), "export is allowed and went")
        let destinations = StatusBoard.read(serviceArea: area, instance: testInstance)?.destinations ?? []
        XCTAssertEqual(destinations.first { $0.destination == .print }?.source, "folder policy")
        XCTAssertEqual(destinations.first { $0.destination == .export }?.available, true)
        XCTAssertEqual(recorder.outcomes.count, 0, "the document is not done while print waits")

        try text("export, print").write(toFile: file, atomically: true, encoding: .utf8)
        service.reload(try ServiceConfiguration.load(file: file))
        waitUntil(timeout: 60, "the document to print after the reload") { recorder.outcomes.count == 1 }
        XCTAssertTrue(recorder.outcomes.first?.succeeded == true, recorder.logText)
        XCTAssertNotNil(cups.capture(queue: "station", job: 1), "printed once")
        XCTAssertEqual(regularFiles(in: temp.path + "/out"), ["memo.pdf"], "exported once, not again after the reload")
    }

    func testTheDocumentSourceRefusesPrintingAForbiddingPDF() {
        var facts = DocumentFacts(type: .pdf)
        facts.allowPrint = false
        XCTAssertEqual(DocumentFeatures.availability(of: .print, format: .pdf, facts: facts), .unavailable("the PDF's permissions forbid printing"))
        XCTAssertEqual(DocumentFeatures.availability(of: .export, format: .pdf, facts: facts), .available)
        XCTAssertEqual(DocumentFeatures.availability(of: .print, format: .original, facts: facts), .available, "the original goes as it is")
    }

    func testADestinationIsTheAndOfItsSourcesAndObserversHearChanges() {
        final class Switch: ProbedSource, @unchecked Sendable {
            let on = Mutex(true)
            override func probe() -> Availability { on.withLock { $0 } ? .available : .unavailable("switched off") }
        }
        let a = Switch(sourceName: "a"), b = Switch(sourceName: "b")
        let feature = DestinationFeature(destination: .export, sources: [a, b])
        let heard = Mutex<[DestinationFeature.Verdict]>([])
        feature.observe { v in heard.withLock { $0.append(v) } }
        XCTAssertNil(feature.check())
        b.on.withLock { $0 = false }
        XCTAssertEqual(feature.check()?.0.sourceName, "b")
        a.on.withLock { $0 = false }
        XCTAssertEqual(feature.check()?.0.sourceName, "a", "the first source that says no is reported")
        let resumed = Mutex(false)
        a.waitUntilAvailable { resumed.withLock { $0 = true } }
        a.on.withLock { $0 = true }
        waitUntil(timeout: 10, "the parked work to resume when the source says yes") { resumed.withLock { $0 } }
        XCTAssertEqual(heard.withLock { $0 }.last?.source, "b", "a is back; b still says no")
    }
}
