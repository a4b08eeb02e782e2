import Foundation
import XCTest
@testable import HotFolderKit

/// Job tickets through the running service (real inotify on temp folders):
/// a `<file>.ticket` picks among the folder's options and goes where its
/// document goes.
final class TicketTests: XCTestCase {
    let threePages = TestPDF(pages: 3).bytes

    /// Writes a ticket the way a person or script would: to a temporary name, then renamed.
    func dropTicket(_ h: ServiceHarness, for name: String, _ text: String) {
        writeFile(h.drop + "/.tmp-ticket", text)
        XCTAssertEqual(rename(h.drop + "/.tmp-ticket", h.drop + "/" + name + ".ticket"), 0)
    }

    func testATicketPicksAmongTheAllowedOptionsAndMovesWithItsDocument() throws {
        let h = try ServiceHarness("export.pages = all, first, last\n", settle: "200ms")
        defer { h.stop() }
        h.start()
        dropTicket(h, for: "report.pdf", "# the last page only\npages = last\nname = Quarterly report\n")
        writeFile(h.drop + "/report.pdf", threePages)
        h.waitForOutcomes(1)
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(PDFBytes.pageMarkers(readBytes(h.out + "/Quarterly report.pdf")), [3])
        XCTAssertEqual(regularFiles(in: h.done).sorted(), ["report.pdf", "report.pdf.ticket"])
        XCTAssertTrue(readText(h.done + "/report.pdf.ticket").contains("pages = last"))
        XCTAssertTrue(h.recorder.logText.contains("with its ticket"), h.recorder.logText)
    }

    func testWithoutATicketTheDefaultsApply() throws {
        let h = try ServiceHarness("export.pages = all, first\n")
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/plain.pdf", threePages)
        h.waitForOutcomes(1)
        XCTAssertEqual(PDFBytes.pageMarkers(readBytes(h.out + "/plain.pdf")), [1, 2, 3])
        XCTAssertEqual(regularFiles(in: h.done), ["plain.pdf"])
    }

    func testARequiredTicketThatComesAfterItsDocumentIsWaitedFor() throws {
        let h = try ServiceHarness("tickets = required\nticket-wait = 1m\nexport.pages = all, first\n")
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/late.pdf", threePages)
        waitUntil(timeout: 30, "the document to wait for its ticket") { h.service.waitingForTickets("test") == 1 }
        XCTAssertTrue(exists(h.drop + "/late.pdf"), "not claimed while waiting")
        waitUntil(timeout: 10, "hotfolder status to say why") {
            FolderStatus.report(for: h.service.configuration).contains("late.pdf: waits for its job ticket late.pdf.ticket")
        }
        dropTicket(h, for: "late.pdf", "pages = first\n")
        h.waitForOutcomes(1)
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(PDFBytes.pageMarkers(readBytes(h.out + "/late.pdf")), [1])
    }

    func testARequiredTicketThatNeverComesFailsTheDocumentWithTheReason() throws {
        let h = try ServiceHarness("tickets = required\nticket-wait = 300ms\n")
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/alone.pdf", threePages)
        h.waitForOutcomes(1)
        let failure = try XCTUnwrap(h.recorder.outcomes.first?.failure)
        XCTAssertEqual(failure.step, .ticket)
        XCTAssertTrue(failure.reason.contains("no job ticket (alone.pdf.ticket) came within ticket-wait"), failure.reason)
        XCTAssertEqual(readBytes(h.failed + "/alone.pdf"), threePages)
        XCTAssertTrue(h.errorText(for: "alone.pdf").contains("tickets = required"))
        XCTAssertFalse(exists(h.out + "/alone.pdf"))
    }

    func testAnInvalidTicketFailsTheJobAndTravelsToFailed() throws {
        let h = try ServiceHarness(settle: "200ms")
        defer { h.stop() }
        h.start()
        dropTicket(h, for: "bad.pdf", "pages = first\ncolour = red\n")
        writeFile(h.drop + "/bad.pdf", threePages)
        h.waitForOutcomes(1)
        let failure = try XCTUnwrap(h.recorder.outcomes.first?.failure)
        XCTAssertEqual(failure.step, .ticket)
        XCTAssertTrue(failure.reason.contains("line 2: unknown key colour"), failure.reason)
        XCTAssertEqual(regularFiles(in: h.failed).sorted(), ["bad.pdf", "bad.pdf.error.txt", "bad.pdf.ticket"])
    }

    func testATicketAskingForSomethingNotAllowedFails() throws {
        let h = try ServiceHarness("export.annotations = flatten\n", settle: "200ms")
        defer { h.stop() }
        h.start()
        dropTicket(h, for: "greedy.pdf", "annotations = embed\n")
        writeFile(h.drop + "/greedy.pdf", threePages)
        h.waitForOutcomes(1)
        let failure = try XCTUnwrap(h.recorder.outcomes.first?.failure)
        XCTAssertTrue(failure.reason.contains("the ticket asks for embed, which export.annotations does not allow"), failure.reason)
        XCTAssertTrue(exists(h.failed + "/greedy.pdf.ticket"))
    }

    func testATicketWithoutItsDocumentFailsAfterTicketWait() throws {
        let h = try ServiceHarness("ticket-wait = 300ms\n")
        defer { h.stop() }
        h.start()
        dropTicket(h, for: "ghost.pdf", "pages = first\n")
        h.waitForOutcomes(1)
        let failure = try XCTUnwrap(h.recorder.outcomes.first?.failure)
        XCTAssertTrue(failure.reason.contains("no document named \"ghost.pdf\" came for this ticket"), failure.reason)
        XCTAssertEqual(regularFiles(in: h.failed).sorted(), ["ghost.pdf.ticket", "ghost.pdf.ticket.error.txt"])
    }

    func testATicketThatIsALinkOrAFIFOIsNeverRead() throws {
        let h = try ServiceHarness(settle: "200ms")
        defer { h.stop() }
        let secret = h.temp.path + "/secret.txt"
        writeFile(secret, "root-password = hunter2\n")
        h.start()
        XCTAssertEqual(symlink(secret, h.drop + "/a.pdf.ticket"), 0)
        XCTAssertEqual(link(secret, h.drop + "/b.pdf.ticket"), 0)
        XCTAssertEqual(mkfifo(h.drop + "/c.pdf.ticket", 0o600), 0)
        for name in ["a.pdf", "b.pdf", "c.pdf"] { writeFile(h.drop + "/" + name, threePages) }
        h.waitForOutcomes(3, timeout: 60)
        for name in ["a.pdf", "b.pdf", "c.pdf"] {
            let failure = try XCTUnwrap(h.recorder.outcomes(for: name).first?.failure, name)
            XCTAssertTrue(failure.reason.contains("not a plain file"), "\(name): \(failure.reason)")
            XCTAssertFalse(h.errorText(for: name).contains("hunter2"), "the linked file's content is never quoted")
        }
        XCTAssertEqual(readText(secret), "root-password = hunter2\n")
    }

    func testHostileTicketNamesStayInsideTheExportFolder() throws {
        let h = try ServiceHarness(settle: "200ms")
        defer { h.stop() }
        h.start()
        dropTicket(h, for: "x.pdf", "name = ../../etc/passwd\u{202E}\ntitle = $(touch pwned)\n")
        writeFile(h.drop + "/x.pdf", threePages)
        h.waitForOutcomes(1)
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        let names = regularFiles(in: h.out)
        XCTAssertEqual(names.count, 1, "\(names)")
        XCTAssertFalse(names[0].contains("/"))
        XCTAssertFalse(names[0].contains("\u{202E}"), "bidi override removed")
        XCTAssertFalse(exists("pwned") || exists(h.drop + "/pwned"))
    }
}
