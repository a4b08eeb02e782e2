import CSystem
import Foundation
import Synchronization
import XCTest
@testable import HotFolderKit

/// How files arrive: real inotify on temporary folders, a running service,
/// and the folders themselves as the evidence.
final class WatcherTests: XCTestCase {
    func pdf(_ n: Int, pages: Int = 1) -> [UInt8] {
        var pdf = TestPDF(pages: pages, title: "Document \(n)")
        pdf.trailerComment = "document \(n)"
        return pdf.bytes
    }

    func testFilesPresentAtStartAreProcessed() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        for n in 1...3 { writeFile(h.drop + "/early-\(n).pdf", pdf(n, pages: n)) }
        h.start()
        h.waitForOutcomes(3)
        XCTAssertEqual(h.recorder.succeeded.count, 3, h.recorder.logText)
        XCTAssertEqual(files(in: h.done), ["early-1.pdf", "early-2.pdf", "early-3.pdf"])
        XCTAssertEqual(files(in: h.out), ["early-1.pdf", "early-2.pdf", "early-3.pdf"])
        for n in 1...3 {
            XCTAssertEqual(readBytes(h.done + "/early-\(n).pdf"), pdf(n, pages: n), "the original is moved to done/ unchanged")
            XCTAssertEqual(try summarize(h.out + "/early-\(n).pdf").pages, n)
        }
        h.waitUntilIdle()
        XCTAssertEqual(files(in: h.drop), ["done"], "nothing left in the drop folder")
    }

    func testCpLikeWrite() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/copied.pdf", pdf(1))
        h.waitForOutcomes(1)
        let outcome = try XCTUnwrap(h.recorder.outcomes.first)
        XCTAssertTrue(outcome.succeeded, "\(String(describing: outcome.failure))")
        XCTAssertEqual(outcome.original, "copied.pdf")
        XCTAssertEqual(outcome.folder, "test")
        XCTAssertEqual(outcome.delivered, [h.out + "/copied.pdf"])
        XCTAssertEqual(outcome.originalNow, h.done + "/copied.pdf")
        XCTAssertEqual(readBytes(h.done + "/copied.pdf"), pdf(1))
        XCTAssertTrue(h.recorder.logs.contains { $0.message.contains("(inotify") }, "watched with inotify: \(h.recorder.logText)")
    }

    func testMoveFromASiblingFolder() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        let staging = h.temp.sub("staging")
        h.start()
        for n in 1...3 {
            writeFile(staging + "/moved-\(n).pdf", pdf(n))
            XCTAssertEqual(rename(staging + "/moved-\(n).pdf", h.drop + "/moved-\(n).pdf"), 0)
        }
        h.waitForOutcomes(3)
        XCTAssertEqual(h.recorder.succeeded.count, 3, h.recorder.logText)
        XCTAssertEqual(files(in: h.done), ["moved-1.pdf", "moved-2.pdf", "moved-3.pdf"])
        XCTAssertEqual(readBytes(h.done + "/moved-2.pdf"), pdf(2))
    }

    func testPartFileRenamedToPDF() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/upload.pdf.part", pdf(1))
        // A later file is processed: the .part file's events came before and were skipped.
        writeFile(h.drop + "/sentinel.pdf", pdf(2))
        h.waitForOutcomes(1)
        XCTAssertEqual(h.recorder.outcomes.map(\.original), ["sentinel.pdf"])
        XCTAssertEqual(readBytes(h.drop + "/upload.pdf.part"), pdf(1), "a .part file is left alone")

        XCTAssertEqual(rename(h.drop + "/upload.pdf.part", h.drop + "/upload.pdf"), 0)
        h.waitForOutcomes(2)
        XCTAssertEqual(h.recorder.outcomes(for: "upload.pdf").count, 1)
        XCTAssertTrue(h.recorder.outcomes(for: "upload.pdf").first?.succeeded == true)
        XCTAssertEqual(readBytes(h.done + "/upload.pdf"), pdf(1))
        XCTAssertFalse(exists(h.drop + "/upload.pdf.part"))
    }

    /// A writer that keeps the file open and pauses between chunks (a slow
    /// network copy): never taken before it is complete.
    func testSlowWriterIsNeverTakenEarly() throws {
        let h = try ServiceHarness(settle: "1s")
        defer { h.stop() }
        h.start()
        let whole = pdf(1, pages: 12)
        let path = h.drop + "/slow.pdf"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        let chunks = 7
        let size = (whole.count + chunks - 1) / chunks
        for i in 0..<chunks {
            let chunk = Array(whole[(i * size)..<min(whole.count, (i + 1) * size)])
            XCTAssertEqual(chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, chunk.count)
            XCTAssertTrue(exists(path), "taken after \(i + 1) of \(chunks) chunks, while still being written")
            XCTAssertEqual(h.recorder.outcomes.count, 0)
            if i < chunks - 1 { usleep(300_000) } // creates the condition: a writer that pauses
        }
        XCTAssertTrue(exists(path), "taken before the writer closed the file")
        close(fd)
        h.waitForOutcomes(1)
        let outcome = try XCTUnwrap(h.recorder.outcomes.first)
        XCTAssertTrue(outcome.succeeded, "\(String(describing: outcome.failure))")
        XCTAssertEqual(readBytes(h.done + "/slow.pdf"), whole, "the done/ copy is the whole file")
        XCTAssertEqual(PDFBytes.pageMarkers(readBytes(h.out + "/slow.pdf")), Array(1...12))
    }

    /// A file the start's scan finds while its writer still holds it open and
    /// pauses far longer than settle (here settle = 0 and 0.2 s; in poll mode
    /// too, where no close event ever comes): it is not taken until the
    /// writer closes it (the kernel tells, through a read lease).
    func testFileHeldOpenByItsWriterIsNotTakenHoweverLongItPauses() throws {
        for (mode, settle) in [("watch = inotify\n", "0"), ("watch = poll\npoll-interval = 100ms\n", "200ms")] {
            let h = try ServiceHarness(mode, settle: settle)
            defer { h.stop() }
            let whole = pdf(2, pages: 6)
            let path = h.drop + "/held.pdf"
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            XCTAssertGreaterThanOrEqual(fd, 0)
            let half = whole.count / 2
            XCTAssertEqual(whole.withUnsafeBytes { write(fd, $0.baseAddress, half) }, half)
            h.start()
            writeFile(h.drop + "/sentinel.pdf", pdf(3))
            h.waitForOutcomes(1)
            // The writer's pause, many times settle: the file must stay.
            rlHolds(for: 1.5, "\(mode): the held file stays in the folder") { exists(path) && h.recorder.outcomes.count == 1 }
            XCTAssertEqual(whole[half...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, whole.count - half)
            close(fd)
            h.waitForOutcomes(2)
            XCTAssertEqual(h.recorder.outcomes.map(\.original).sorted(), ["held.pdf", "sentinel.pdf"], mode)
            XCTAssertTrue(h.recorder.outcomes.allSatisfy(\.succeeded), "\(mode): \(h.recorder.logText)")
            XCTAssertEqual(readBytes(h.done + "/held.pdf"), whole, "\(mode): the whole file")
        }
    }

    /// A file whose writer's close event is awaited when events are lost (an
    /// overflow) or stop (inotify gave up on the folder): the close may never
    /// come, so the settler decides by a quiet period and the writer check,
    /// and the file is handed on once its writer has closed it.
    func testAFileWaitingForItsCloseIsDecidedAfterEventsAreLost() throws {
        let temp = TemporaryFolder("hf-settler")
        let ready = Mutex<[String]>([])
        let settler = Settler(settle: 0, label: "t", onReady: { c in ready.withLock { $0.append(c.name) } })
        defer { settler.cancel() }
        for (name, event) in [("a.pdf", WatchEvent.overflow), ("b.pdf", .cannotWatch(path: temp.path, reason: "test"))] {
            let fd = open(temp.path + "/" + name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            XCTAssertGreaterThanOrEqual(fd, 0)
            settler.receive(.created(directory: temp.path, name: name))
            settler.receive(event)
            // Still open for writing: not handed on, however long.
            rlHolds(for: 1.2, "\(name) waits while open for writing") { !ready.withLock { $0.contains(name) } }
            close(fd)
            waitUntil(timeout: 10, "\(name) to be handed on after its writer closed it") { ready.withLock { $0.contains(name) } }
        }
    }

    /// The writer check takes a lease for a moment; a writer opening the file
    /// in that moment makes the kernel send SIGIO, whose default action would
    /// end the service: it is ignored.
    func testTheWriterCheckLeavesSIGIOIgnored() throws {
        let temp = TemporaryFolder("hf-sigio")
        writeFile(temp.path + "/x.pdf", pdf(1))
        XCTAssertEqual(hf_open_for_writing(temp.path + "/x.pdf"), getuid() == 0 ? 0 : -1)
        var current = sigaction()
        XCTAssertEqual(sigaction(SIGIO, nil, &current), 0)
        XCTAssertEqual(unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self), unsafeBitCast(SIG_IGN, to: Int.self))
    }

    /// A writer that closes and reopens the file between chunks (some SMB and
    /// FTP clients): every close restarts the settle time.
    func testAppendingWriterThatClosesBetweenChunks() throws {
        // 2 s: a loaded machine may stretch a 300 ms pause, and here every close counts.
        let h = try ServiceHarness(settle: "2s")
        defer { h.stop() }
        h.start()
        let whole = pdf(1, pages: 8)
        let path = h.drop + "/appended.pdf"
        let chunks = 6
        let size = (whole.count + chunks - 1) / chunks
        for i in 0..<chunks {
            let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            XCTAssertGreaterThanOrEqual(fd, 0)
            let chunk = Array(whole[(i * size)..<min(whole.count, (i + 1) * size)])
            XCTAssertEqual(chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, chunk.count)
            close(fd)
            XCTAssertTrue(exists(path), "taken after \(i + 1) of \(chunks) chunks")
            if i < chunks - 1 { usleep(300_000) }
        }
        h.waitForOutcomes(1)
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(readBytes(h.done + "/appended.pdf"), whole)
    }

    func testBurstOfAThousandFiles() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        h.start()
        let count = 1000
        let started = Date()
        for n in 0..<count { writeFile(h.drop + String(format: "/burst-%04d.pdf", n), pdf(n)) }
        h.waitForOutcomes(count, timeout: 90)
        h.waitUntilIdle()
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertLessThan(elapsed, 45, "1,000 one-page PDFs took \(elapsed) s")
        let outcomes = h.recorder.outcomes
        XCTAssertEqual(outcomes.count, count, "each file exactly once")
        XCTAssertEqual(Set(outcomes.map(\.original)).count, count, "no file twice")
        XCTAssertEqual(outcomes.filter(\.succeeded).count, count, h.recorder.failed.first.map { "\($0.original): \(String(describing: $0.failure))" } ?? "")
        let done = files(in: h.done)
        XCTAssertEqual(done.count, count)
        XCTAssertFalse(done.contains { $0.contains(" (2)") }, "no duplicate in done/")
        XCTAssertEqual(files(in: h.out).count, count)
        XCTAssertFalse(exists(h.failed))
        XCTAssertEqual(files(in: h.drop), ["done"])
        XCTAssertEqual(readBytes(h.done + "/burst-0777.pdf"), pdf(777))
    }

    func testRecursiveNewSubfolderFilledImmediately() throws {
        let h = try ServiceHarness("recursive = yes\n", settle: "100ms")
        defer { h.stop() }
        h.start()
        let sub = h.drop + "/incoming"
        XCTAssertEqual(mkdir(sub, 0o755), 0)
        for n in 0..<20 { writeFile(sub + "/sub-\(n).pdf", pdf(n)) }
        let deeper = sub + "/deeper/still"
        try FileManager.default.createDirectory(atPath: deeper, withIntermediateDirectories: true)
        for n in 0..<5 { writeFile(deeper + "/deep-\(n).pdf", pdf(100 + n)) }
        h.waitForOutcomes(25)
        h.waitUntilIdle()
        XCTAssertEqual(h.recorder.succeeded.count, 25, h.recorder.logText)
        XCTAssertEqual(files(in: h.done).count, 25)
        XCTAssertEqual(regularFiles(in: sub), [], "every file of the new subfolder was taken")
        XCTAssertEqual(regularFiles(in: deeper), [])
        XCTAssertEqual(readBytes(h.done + "/deep-3.pdf"), pdf(103))
    }

    func testRecursiveFolderMovedIn() throws {
        let h = try ServiceHarness("recursive = yes\n", settle: "100ms")
        defer { h.stop() }
        let staging = h.temp.sub("staging/batch")
        for n in 0..<5 { writeFile(staging + "/batch-\(n).pdf", pdf(n)) }
        h.start()
        XCTAssertEqual(rename(staging, h.drop + "/batch"), 0)
        h.waitForOutcomes(5)
        XCTAssertEqual(h.recorder.succeeded.count, 5, h.recorder.logText)
        XCTAssertEqual(regularFiles(in: h.drop + "/batch"), [])
    }

    func testNonRecursiveFolderIgnoresSubfolders() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        h.start()
        let sub = h.drop + "/sub"
        XCTAssertEqual(mkdir(sub, 0o755), 0)
        writeFile(sub + "/nested.pdf", pdf(1))
        writeFile(h.drop + "/sentinel.pdf", pdf(2))
        h.waitForOutcomes(1)
        h.waitUntilIdle()
        XCTAssertEqual(h.recorder.outcomes.map(\.original), ["sentinel.pdf"])
        XCTAssertEqual(readBytes(sub + "/nested.pdf"), pdf(1))
    }

    /// done/, failed/, the service area and an export folder inside the drop
    /// folder are never processed, even with recursive = yes.
    func testServiceOwnFoldersAreNeverProcessed() throws {
        let h = try ServiceHarness("recursive = yes\nexport.to = drop/exports\n")
        defer { h.stop() }
        let exports = h.drop + "/exports"
        h.start()
        writeFile(h.drop + "/good.pdf", pdf(1))
        writeFile(h.drop + "/bad.pdf", Array("not a pdf".utf8))
        h.waitForOutcomes(2)
        h.waitUntilIdle()
        // Files put by hand into the service's folders stay where they are.
        writeFile(h.done + "/by-hand.pdf", pdf(3))
        writeFile(h.failed + "/by-hand.pdf", pdf(4))
        writeFile(exports + "/by-hand.pdf", pdf(5))
        writeFile(h.drop + "/.hotfolder/by-hand.pdf", pdf(6))
        writeFile(h.drop + "/sentinel.pdf", pdf(7))
        h.waitForOutcomes(3)
        h.waitUntilIdle()
        XCTAssertEqual(h.recorder.outcomes.map(\.original).sorted(), ["bad.pdf", "good.pdf", "sentinel.pdf"], h.recorder.logText)
        XCTAssertEqual(files(in: exports), ["by-hand.pdf", "good.pdf", "sentinel.pdf"])
        XCTAssertEqual(files(in: h.done), ["by-hand.pdf", "good.pdf", "sentinel.pdf"])
        XCTAssertEqual(files(in: h.failed), ["bad.pdf", "bad.pdf.error.txt", "by-hand.pdf"])
        XCTAssertEqual(readBytes(h.drop + "/.hotfolder/by-hand.pdf"), pdf(6))
        XCTAssertEqual(files(in: h.drop), ["done", "exports", "failed"])
    }

    /// The export folder lies inside the (recursive) drop folder but is named
    /// through a symlink: it is still the service's own, never watched, so
    /// its exports are not taken as new documents (a loop).
    func testOwnFolderNamedThroughASymlinkIsNeverProcessed() throws {
        let h = try ServiceHarness("recursive = yes\nexport.to = via/exports\n") { paths in
            XCTAssertEqual(symlink(paths.drop, paths.root + "/via"), 0)
        }
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/good.pdf", pdf(1))
        h.waitForOutcomes(1)
        h.waitUntilIdle()
        writeFile(h.drop + "/exports/by-hand.pdf", pdf(2))
        writeFile(h.drop + "/sentinel.pdf", pdf(3))
        h.waitForOutcomes(2)
        h.waitUntilIdle()
        XCTAssertEqual(h.recorder.outcomes.map(\.original).sorted(), ["good.pdf", "sentinel.pdf"], h.recorder.logText)
        XCTAssertEqual(files(in: h.drop + "/exports"), ["by-hand.pdf", "good.pdf", "sentinel.pdf"])
        XCTAssertEqual(files(in: h.drop), ["done", "exports"])
    }

    func testIgnoredFilesStayUntouched() throws {
        let h = try ServiceHarness("recursive = yes\nignore = draft-*\n")
        defer { h.stop() }
        h.start()
        let junk = ["._x.pdf", ".DS_Store", "Thumbs.db", "~$doc.pdf", ".~lock.x#", "x.part", "x.crdownload", "x.tmp", "desktop.ini", "Draft-1.pdf"]
        for (n, name) in junk.enumerated() { writeFile(h.drop + "/" + name, pdf(n)) }
        for folder in ["@eaDir", "__MACOSX", ".Trashes"] {
            XCTAssertEqual(mkdir(h.drop + "/" + folder, 0o755), 0)
            writeFile(h.drop + "/" + folder + "/inside.pdf", pdf(50))
        }
        writeFile(h.drop + "/sentinel.pdf", pdf(99))
        h.waitForOutcomes(1)
        h.waitUntilIdle()
        XCTAssertEqual(h.recorder.outcomes.map(\.original), ["sentinel.pdf"], h.recorder.logText)
        for (n, name) in junk.enumerated() {
            XCTAssertEqual(readBytes(h.drop + "/" + name), pdf(n), name)
        }
        for folder in ["@eaDir", "__MACOSX", ".Trashes"] {
            XCTAssertEqual(readBytes(h.drop + "/" + folder + "/inside.pdf"), pdf(50), folder)
        }
    }

    func testIncludePatterns() throws {
        let h = try ServiceHarness("include = *.pdf\n")
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/notes.txt", "text")
        writeFile(h.drop + "/UPPER.PDF", pdf(1))
        h.waitForOutcomes(1)
        h.waitUntilIdle()
        XCTAssertEqual(h.recorder.outcomes.map(\.original), ["UPPER.PDF"])
        XCTAssertEqual(readText(h.drop + "/notes.txt"), "text")
    }

    /// A hard link makes only IN_CREATE (no writer closes it): it must still
    /// end, and (another name of it may be anywhere) it is refused, not read.
    func testHardLinkEndsInFailedWithReason() throws {
        let h = try ServiceHarness(settle: "100ms")
        defer { h.stop() }
        let staging = h.temp.sub("staging")
        writeFile(staging + "/linked.pdf", pdf(1))
        h.start()
        XCTAssertEqual(link(staging + "/linked.pdf", h.drop + "/linked.pdf"), 0)
        h.waitForOutcomes(1)
        let outcome = try XCTUnwrap(h.recorder.outcomes.first)
        XCTAssertEqual(outcome.failure?.step, .identify, h.recorder.logText)
        XCTAssertTrue(outcome.failure?.reason.contains("hard link") == true, "\(String(describing: outcome.failure))")
        XCTAssertTrue(exists(h.failed + "/linked.pdf.error.txt"))
        XCTAssertEqual(files(in: h.out), [], "nothing exported")
        XCTAssertEqual(readBytes(staging + "/linked.pdf"), pdf(1), "the other name is not touched")
    }

    func testDropFolderCreatedAfterStart() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        XCTAssertEqual(rmdir(h.drop), 0)
        h.start()
        waitUntil(timeout: 30, "the missing folder is reported") {
            h.recorder.logs.contains { $0.level == .error && $0.message.contains("cannot open the drop folder") }
        }
        XCTAssertEqual(mkdir(h.drop, 0o755), 0)
        writeFile(h.drop + "/late.pdf", pdf(1))
        h.waitForOutcomes(1, timeout: 60)
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
    }

    /// A file whose name is not UTF-8 (Latin-1 from an old client or archive)
    /// must not stay in the drop folder unprocessed and unreported.
    func testNonUTF8FileNameIsNotSilentlyLeftBehind() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        h.start()
        let path: [UInt8] = Array((h.drop + "/caf").utf8) + [0xE9] + Array(".pdf".utf8) + [0]
        let fd = path.withUnsafeBufferPointer { p in
            p.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644) }
        }
        XCTAssertGreaterThanOrEqual(fd, 0)
        let bytes = pdf(1)
        XCTAssertEqual(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, bytes.count)
        close(fd)
        writeFile(h.drop + "/sentinel.pdf", pdf(2))
        waitUntil(timeout: 30, "the sentinel") { h.recorder.outcomes(for: "sentinel.pdf").count == 1 }
        h.waitUntilIdle()
        XCTAssertEqual(files(in: h.drop).filter { $0 != "done" && $0 != "failed" }, [],
                       "left in the drop folder, unreported:\n\(h.recorder.logText)")
        XCTAssertEqual(h.recorder.outcomes.count, 2, "the Latin-1-named document ends like any other")
    }

    // MARK: - polling (watch = poll, for network file systems)

    /// watch = auto (the default) uses inotify on local file systems (ext4,
    /// tmpfs) and names the remote ones it would poll by their statfs type.
    func testAutoWatchUsesInotifyOnLocalFileSystems() throws {
        let temp = TemporaryFolder("hf-auto")
        XCTAssertNil(Poller.remoteFileSystem(at: temp.path))
        XCTAssertNil(Poller.remoteFileSystem(at: "/dev/shm"))
        XCTAssertNil(Poller.remoteFileSystem(at: temp.path + "/missing"), "a folder not there yet is no remote one")
        XCTAssertEqual(Poller.remoteFileSystems[0x6969], "NFS")
        XCTAssertEqual(Poller.remoteFileSystems[0xFE53_4D42], "SMB2")
        XCTAssertEqual(Poller.remoteFileSystems[0x6573_5546], "FUSE")
        let h = try ServiceHarness()
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/local.pdf", pdf(1))
        h.waitForOutcomes(1)
        XCTAssertTrue(h.recorder.logs.contains { $0.message.contains("(inotify, rescan every 300 s") }, h.recorder.logText)
    }

    func testPollingFolder() throws {
        let h = try ServiceHarness("watch = poll\npoll-interval = 100ms\n")
        defer { h.stop() }
        writeFile(h.drop + "/early.pdf", pdf(1))
        let staging = h.temp.sub("staging")
        h.start()
        writeFile(h.drop + "/copied.pdf", pdf(2))
        writeFile(staging + "/moved.pdf", pdf(3))
        XCTAssertEqual(rename(staging + "/moved.pdf", h.drop + "/moved.pdf"), 0)
        writeFile(h.drop + "/x.part", pdf(4))
        h.waitForOutcomes(3)
        h.waitUntilIdle()
        XCTAssertEqual(h.recorder.succeeded.map(\.original).sorted(), ["copied.pdf", "early.pdf", "moved.pdf"], h.recorder.logText)
        XCTAssertTrue(h.recorder.logs.contains { $0.message.contains("polling every 100 ms") }, h.recorder.logText)
        XCTAssertEqual(readBytes(h.drop + "/x.part"), pdf(4))
    }

    func testPollingSlowWriterIsNeverTakenEarly() throws {
        let h = try ServiceHarness("watch = poll\npoll-interval = 100ms\n", settle: "1s")
        defer { h.stop() }
        h.start()
        let whole = pdf(1, pages: 10)
        let path = h.drop + "/slow.pdf"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        let chunks = 6
        let size = (whole.count + chunks - 1) / chunks
        for i in 0..<chunks {
            let chunk = Array(whole[(i * size)..<min(whole.count, (i + 1) * size)])
            XCTAssertEqual(chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, chunk.count)
            XCTAssertTrue(exists(path), "taken after \(i + 1) of \(chunks) chunks")
            if i < chunks - 1 { usleep(300_000) }
        }
        close(fd)
        h.waitForOutcomes(1)
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(readBytes(h.done + "/slow.pdf"), whole)
    }
}
