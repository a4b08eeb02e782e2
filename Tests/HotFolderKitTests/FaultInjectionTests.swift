import Foundation
import Glibc
import XCTest
@testable import HotFolderKit

/// Faults injected into a running `hotfolder run`: a worker that crashes, a
/// document over job-timeout or job-memory, a network share (polling) with a
/// slow writer and a drop folder that goes away, an export folder that goes
/// away, and a print submission cut in half by a crash.
final class FaultInjectionTests: XCTestCase {
    // MARK: - worker processes

    /// A document that crashes the PDF engine (the test hook makes the worker
    /// raise SIGSEGV) fails alone, with the signal in its error file; the good
    /// documents around it are all processed, and so is one dropped afterwards.
    func testWorkerCrashFailsOnlyThatDocument() throws {
        // SWIFT_BACKTRACE=enable=no: with Swift's crash backtracer on, a worker
        // often SURVIVES the hook's raise(SIGSEGV) (the backtracer's handler
        // returns, and a raised signal, unlike a real fault, does not come
        // again), and then generates the document normally. See the report.
        let service = try RLService("crash", config: rlConfig(folder: ["export.to": "out", "export.name": "{title}"]),
                                    environment: ["HOTFOLDER_TEST_CRASH_MARKER": "crashme", "SWIFT_BACKTRACE": "enable=no"])
        let f = RLFolders(root: service.root.path)
        try service.start()
        service.waitUntilWatching()
        let good = RLInputs(count: 12, prefix: "good")
        for i in 0..<good.count {
            f.drop(good.names[i], good.bytes(i))
            if i % 4 == 1 { f.drop("crashme-\(i).pdf", rlPDF(title: "crash \(i)")) }
        }
        f.drop("crashme.pdf", rlPDF(title: "crash"))
        let crashes = ["crashme-1.pdf", "crashme-5.pdf", "crashme-9.pdf", "crashme.pdf"]
        waitUntil(timeout: 60, "every document to end") { f.finishedCount >= good.count + crashes.count || !service.isRunning }
        XCTAssertTrue(service.isRunning, "the service died with its worker:\n\(service.currentLog.suffix(3000))")
        XCTAssertEqual(Set(f.doneNames), Set(good.names), "every good document is processed")
        XCTAssertEqual(Set(f.failedNames), Set(crashes))
        for name in crashes {
            let error = readText(f.failed + "/" + name + ".error.txt")
            XCTAssertTrue(error.contains("crashed the PDF engine (signal 11"), "\(name):\n\(error)")
        }
        XCTAssertEqual(Set(files(in: f.out)), Set(good.titles.map { $0 + ".pdf" }))

        f.drop("later.pdf", rlPDF(title: "later"))
        waitUntil(timeout: 30, "a document dropped after the crashes") { exists(f.done + "/later.pdf") || !service.isRunning }
        XCTAssertTrue(exists(f.out + "/later.pdf"))
        XCTAssertLessThanOrEqual(service.workers.count, 2, "crashed workers are replaced, not accumulated: \(service.workers.map(RLProcess.commandLine))")
        XCTAssertEqual(service.terminate().exit, .exited(0))
    }

    /// A decompression bomb (a 50 KB PDF whose content stream inflates to 1 GB)
    /// fails with the job-timeout reason when job-timeout = 1s; its worker is
    /// killed, and the documents around it are processed.
    func testJobTimeoutFailsADecompressionBomb() throws {
        let service = try RLService("timeout", config: rlConfig(service: ["job-timeout": "1s"], folder: ["export.to": "out"]))
        let f = RLFolders(root: service.root.path)
        try service.start()
        service.waitUntilWatching()
        f.drop("bomb.pdf", RLBomb.slow(megabytes: 1024))
        let good = RLInputs(count: 6, prefix: "ok")
        for i in 0..<good.count { f.drop(good.names[i], good.bytes(i)) }
        let began = Date()
        waitUntil(timeout: 60, "the bomb to fail") { exists(f.failed + "/bomb.pdf.error.txt") || !service.isRunning }
        let took = Date().timeIntervalSince(began)
        let error = readText(f.failed + "/bomb.pdf.error.txt")
        XCTAssertTrue(error.contains("generating took longer than job-timeout (1 s)"), error)
        XCTAssertTrue(error.contains("decompression bomb"), error)
        XCTAssertLessThan(took, 15, "the bomb is stopped at job-timeout, not when qpdf gives up")
        waitUntil(timeout: 30, "the good documents") { f.doneNames.count >= good.count || !service.isRunning }
        XCTAssertEqual(Set(f.doneNames), Set(good.names))
        XCTAssertLessThanOrEqual(service.workers.count, 2, "the timed-out worker is gone")
        let busy = service.workers.filter { RLProcess.cpuSeconds($0) > 2 }
        XCTAssertEqual(busy, [], "no worker still inflates the bomb")
        XCTAssertEqual(service.terminate().exit, .exited(0))
    }

    /// A document whose page lies in an object stream that inflates to 1 GB
    /// needs far more than job-memory = 256M: it must fail with the job-memory
    /// reason (and not be "exported" as a damaged copy), while an ordinary
    /// document next to it is processed.
    func testJobMemoryExceededFailsWithTheMemoryReason() throws {
        let service = try RLService("memory", config: rlConfig(service: ["job-memory": "256M", "job-timeout": "60s"], folder: ["export.to": "out"]))
        let f = RLFolders(root: service.root.path)
        try service.start()
        service.waitUntilWatching()
        f.drop("hungry.pdf", RLBomb.memory(megabytes: 1024))
        f.drop("ordinary.pdf", rlPDF(title: "ordinary", pages: 3))
        waitUntil(timeout: 60, "both documents to end") { f.finishedCount >= 2 || !service.isRunning }
        XCTAssertTrue(service.isRunning)
        XCTAssertEqual(f.doneNames, ["ordinary.pdf"], "only the ordinary document succeeds; the log says:\n\(service.currentLog.suffix(2500))")
        XCTAssertEqual(f.failedNames, ["hungry.pdf"])
        let error = readText(f.failed + "/hungry.pdf.error.txt")
        XCTAssertTrue(error.contains("needs more memory than a worker may use (job-memory)"), error)
        XCTAssertFalse(exists(f.out + "/hungry.pdf"), "no damaged copy is exported")
        XCTAssertEqual(service.terminate().exit, .exited(0))
    }

    /// job-memory = 64M is accepted by the configuration (its documented
    /// minimum), so it must be usable: either `check` refuses it, or an
    /// ordinary one-page document is processed with it.
    func testSmallestAcceptedJobMemoryStillProcessesOrdinaryDocuments() throws {
        let config = rlConfig(service: ["job-memory": "64M"], folder: ["export.to": "out"])
        let service = try RLService("memory-floor", config: config)
        let check = try runProcess(service.executable, ["check", "--config", service.configPath])
        guard check.status == 0 else {
            XCTAssertEqual(check.status, 78, "refused as a configuration error: \(check.stderr)")
            return
        }
        let f = RLFolders(root: service.root.path)
        try service.start()
        service.waitUntilWatching()
        var documents: [(String, [UInt8])] = [
            ("tiny.pdf", rlPDF(title: "tiny")),
            ("annotated.pdf", TestPDF(pages: 30, title: "annotated", annotations: [0: [.square("s"), .freeText("f")], 5: [.text("t")]]).bytes),
        ]
        if let corpus = Corpus.directory {
            for name in ["struct--qpdf--object-stream.pdf", "annot--qpdf--comment-annotation.pdf"] {
                documents.append((name, readBytes(corpus + "/" + name)))
            }
        }
        for (name, bytes) in documents { f.drop(name, bytes) }
        waitUntil(timeout: 30, "the documents to end") { f.finishedCount >= documents.count || !service.isRunning }
        XCTAssertEqual(Set(f.doneNames), Set(documents.map(\.0)), "ordinary PDFs fail with job-memory = 64M:\n\(f.errorReport())")
        XCTAssertEqual(service.terminate().exit, .exited(0))
    }

    /// The drop folder's file system (here a 4 MB tmpfs, mounted for the
    /// test) fills up: the PDF engine's write of the result fails with ENOSPC.
    /// That is the service area's fault, not the document's: it waits with the
    /// reason, and goes once there is room again (not to failed/).
    func testFullDiskWhileGeneratingMakesTheDocumentWaitNotFail() throws {
        let service = try RLService("disk-full", config: rlConfig(folder: ["export.to": "out"]))
        let f = RLFolders(root: service.root.path)
        guard getuid() == 0, try runProcess("/bin/mount", ["-t", "tmpfs", "-o", "size=4m", "hf-test", f.drop]).status == 0 else {
            throw XCTSkip("mounting a tmpfs needs root")
        }
        defer { _ = try? runProcess("/bin/umount", ["-l", f.drop]) }
        // Dropped before the start, so that it is there when the disk is full.
        // 2,000 pages: a few hundred KB, in and out (each page is its own objects).
        let document = TestPDF(pages: 2000, title: "big").bytes
        writeFile(f.drop + "/big.pdf", document)
        // All but 64 KB taken (the result is larger; a journal record and the
        // status board still fit), by a file in the service area, which is never watched.
        var fs = statvfs()
        XCTAssertEqual(statvfs(f.drop, &fs), 0)
        let free = Int(fs.f_bavail) * Int(fs.f_bsize)
        XCTAssertGreaterThan(document.count, 256 << 10, "the result must not fit")
        try FileManager.default.createDirectory(atPath: f.drop + "/.hotfolder", withIntermediateDirectories: true)
        let filler = f.drop + "/.hotfolder/filler"
        writeFile(filler, [UInt8](repeating: 0x55, count: free - (64 << 10)))
        try service.start()
        waitUntil(timeout: 30, "the document to wait for room") { service.currentLog.contains("big.pdf waits:") || !service.isRunning }
        let log = service.currentLog
        XCTAssertTrue(log.contains("cannot write the result") && log.contains("No space left on device"), log)
        XCTAssertEqual(f.failedNames, [], "a full disk is no fault of the document's")
        XCTAssertEqual(unlink(filler), 0)
        waitUntil(timeout: 60, "the document to go once there is room") { exists(f.done + "/big.pdf") || !service.isRunning }
        XCTAssertEqual(try summarize(f.out + "/big.pdf").pages, 2000)
        XCTAssertEqual(f.failedNames, [])
        XCTAssertEqual(service.terminate().exit, .exited(0))
    }

    // MARK: - network share (watch = poll)

    /// Two slow writers on a polled share (one keeps the file open, one opens
    /// it anew for every chunk, as SMB clients do), with pauses shorter than
    /// settle: neither file is taken before it is complete, and the exported
    /// copies (export.format = original) are byte-identical to what was written.
    func testPolledSlowWriterIsNeverTakenEarly() throws {
        var rng = RLRandom.forTest("slow-writer")
        let service = try RLService("slow-writer", config: rlConfig(folder: [
            "watch": "poll", "poll-interval": "100ms", "settle": "1s", "export.to": "out", "export.format": "original",
        ]))
        let f = RLFolders(root: service.root.path)
        try service.start()
        service.waitUntilWatching()
        XCTAssertTrue(service.currentLog.contains("polling every 100 ms"), service.currentLog)

        let content = TestPDF(pages: 30, title: "slow").bytes
        let chunks = stride(from: 0, to: content.count, by: (content.count + 11) / 12).map { Array(content[$0..<min($0 + (content.count + 11) / 12, content.count)]) }
        let held = open(f.drop + "/held.pdf", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        XCTAssertGreaterThanOrEqual(held, 0)
        for (k, chunk) in chunks.enumerated() {
            XCTAssertEqual(chunk.withUnsafeBytes { write(held, $0.baseAddress, $0.count) }, chunk.count)
            let reopened = open(f.drop + "/reopened.pdf", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            XCTAssertEqual(chunk.withUnsafeBytes { write(reopened, $0.baseAddress, $0.count) }, chunk.count)
            close(reopened)
            // The writer's own pace (shorter than settle), not a synchronization.
            usleep(UInt32.random(in: 100_000...300_000, using: &rng))
            if k < chunks.count - 1 {
                XCTAssertTrue(exists(f.drop + "/held.pdf") && exists(f.drop + "/reopened.pdf"), "a file was taken while still being written (chunk \(k + 1) of \(chunks.count))")
            }
        }
        close(held)
        waitUntil(timeout: 30, "both files") { f.finishedCount >= 2 || !service.isRunning }
        XCTAssertEqual(f.failedNames, [], f.errorReport())
        for name in ["held.pdf", "reopened.pdf"] {
            XCTAssertEqual(readBytes(f.out + "/" + name), content, "\(name): the export is the whole file")
            XCTAssertEqual(readBytes(f.done + "/" + name), content, "\(name): the original is the whole file")
        }
        XCTAssertEqual(service.terminate().exit, .exited(0))
    }

    /// A claim that fails (here the file is immutable, chattr +i, so even root
    /// cannot move it) leaves the document in a polled folder, and the poller
    /// does not announce an unchanged file again by itself: the safety rescan
    /// must, so that the document is taken once the cause is gone.
    func testPolledDocumentWhoseClaimFailedIsTakenByTheRescan() throws {
        let service = try RLService("claim-retry", config: rlConfig(folder: [
            "watch": "poll", "poll-interval": "100ms", "settle": "1s", "rescan": "1s", "export.to": "out",
        ]))
        let f = RLFolders(root: service.root.path)
        try service.start()
        service.waitUntilWatching()
        let held = f.drop + "/held.pdf"
        writeFile(held, rlPDF(title: "held"))
        // Long before settle (1 s) ends; the poller has not even seen it twice.
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr"), try runProcess("/usr/bin/chattr", ["+i", held]).status == 0 else {
            throw XCTSkip("chattr +i is not supported here")
        }
        defer { _ = try? runProcess("/usr/bin/chattr", ["-i", held]) }
        waitUntil(timeout: 30, "the claim to fail") { service.currentLog.contains("cannot claim") || !service.isRunning }
        XCTAssertTrue(exists(held), "the document stays where it is")
        let configuration = try ServiceConfiguration.load(file: service.configPath)
        waitUntil(timeout: 10, "status to say why it waits") {
            FolderStatus.report(for: configuration).contains("held.pdf: cannot be taken from the drop folder (Operation not permitted); tried again every 1 s")
        }
        XCTAssertEqual(try runProcess("/usr/bin/chattr", ["-i", held]).status, 0)
        waitUntil(timeout: 30, "the document to be taken by a rescan") { exists(f.done + "/held.pdf") || !service.isRunning }
        XCTAssertTrue(exists(f.out + "/held.pdf"), service.currentLog)
        waitUntil(timeout: 10, "status to forget it") { !FolderStatus.report(for: configuration).contains("held.pdf") }
        XCTAssertEqual(f.failedNames, [])
        XCTAssertEqual(service.terminate().exit, .exited(0))
    }

    /// The polled drop folder is removed (rm -rf: a share unmounted, a folder
    /// deleted): the service says so once, keeps running, fails nothing, and
    /// watches the folder again when it is back.
    func testPolledDropFolderRemovedIsReportedAndWatchedAgain() throws {
        let service = try RLService("drop-gone", config: rlConfig(folder: ["watch": "poll", "poll-interval": "100ms", "export.to": "out"]))
        let f = RLFolders(root: service.root.path)
        try service.start()
        service.waitUntilWatching()
        f.drop("before.pdf", rlPDF(title: "before"))
        waitUntil(timeout: 30, "the first document") { exists(f.out + "/before.pdf") }

        try rlRemoveTree(f.drop)
        waitUntil(timeout: 30, "the service to notice") { service.log.contains("is gone") || !service.isRunning }
        XCTAssertTrue(service.isRunning, "the service died when its drop folder went away (\(service.process?.exit?.description ?? "")):\n\(service.currentLog.suffix(3000))")
        guard service.isRunning else { return }
        XCTAssertEqual(mkdir(f.drop, 0o755), 0)
        f.drop("after.pdf", rlPDF(title: "after"))
        waitUntil(timeout: 30, "the document dropped after the folder came back") { exists(f.done + "/after.pdf") || !service.isRunning }
        XCTAssertTrue(exists(f.out + "/after.pdf"))
        XCTAssertEqual(service.count("is gone"), 1, "reported once")
        XCTAssertEqual(service.count("watching "), 2, "watched again")
        XCTAssertFalse(service.log.contains("failed:"), "nothing is failed for the missing folder")
        XCTAssertEqual(f.failedNames, [])
        XCTAssertEqual(service.terminate().exit, .exited(0))
    }

    /// Removed and made anew at once, faster than a poll (a script that resets
    /// the share): documents dropped into the new folder must be taken.
    func testPolledDropFolderRecreatedAtOnceIsStillServed() throws {
        let service = try RLService("drop-reset", config: rlConfig(folder: ["watch": "poll", "poll-interval": "100ms", "export.to": "out"]))
        let f = RLFolders(root: service.root.path)
        try service.start()
        service.waitUntilWatching()
        f.drop("before.pdf", rlPDF(title: "before"))
        waitUntil(timeout: 30, "the first document") { exists(f.out + "/before.pdf") }

        // Made anew within microseconds, so no poll sees the folder missing;
        // then the old tree is deleted.
        XCTAssertEqual(rename(f.drop, f.drop + ".old"), 0)
        XCTAssertEqual(mkdir(f.drop, 0o755), 0)
        try rlRemoveTree(f.drop + ".old")
        f.drop("after.pdf", rlPDF(title: "after"))
        waitUntil(timeout: 15, "the document dropped into the new folder") { exists(f.done + "/after.pdf") || !service.isRunning }
        XCTAssertTrue(exists(f.out + "/after.pdf"), "never taken; still in the drop folder: \(f.leftInDrop)\n\(service.currentLog.suffix(2000))")
        XCTAssertEqual(service.terminate().exit, .exited(0))
    }

    // MARK: - export folder faults

    /// The export folder is replaced by a FILE of the same name (as root,
    /// permissions cannot stop the service; this can): documents wait (claimed,
    /// not failed, not done), the log says why without repeating it at every
    /// retry, and once the folder is back they are exported and moved to done/.
    func testExportFolderReplacedByAFileMakesDocumentsWaitThenExport() throws {
        try exportFolderGoesAway("file") { out in
            try FileManager.default.removeItem(atPath: out)
            writeFile(out, "not a folder")
        } restore: { out in
            try FileManager.default.removeItem(atPath: out)
            XCTAssertEqual(mkdir(out, 0o755), 0)
        }
    }

    /// The export folder path becomes a dangling symbolic link (a share whose
    /// mount point is gone), then a real folder again.
    func testExportFolderAsDanglingSymlinkMakesDocumentsWaitThenExport() throws {
        try exportFolderGoesAway("dangling") { out in
            try FileManager.default.removeItem(atPath: out)
            XCTAssertEqual(symlink("/nonexistent/hotfolder-rl-export", out), 0)
        } restore: { out in
            XCTAssertEqual(unlink(out), 0)
            XCTAssertEqual(mkdir(out, 0o755), 0)
        }
    }

    /// Simply removed (rm -rf): the service makes it anew and exports there.
    func testExportFolderRemovedIsMadeAnew() throws {
        let service = try RLService("export-removed", config: rlConfig(folder: ["export.to": "out", "export.name": "{title}"]))
        let f = RLFolders(root: service.root.path)
        try service.start()
        service.waitUntilWatching()
        f.drop("first.pdf", rlPDF(title: "first"))
        waitUntil(timeout: 30, "the first export") { exists(f.out + "/first.pdf") }
        try FileManager.default.removeItem(atPath: f.out)
        f.drop("second.pdf", rlPDF(title: "second"))
        waitUntil(timeout: 30, "the second export") { exists(f.out + "/second.pdf") || f.failedNames.count > 0 || !service.isRunning }
        XCTAssertTrue(exists(f.out + "/second.pdf"), "not exported into the re-made folder:\n\(service.currentLog.suffix(2000))")
        waitUntil(timeout: 30, "the original in done/") { f.doneNames.count == 2 }
        XCTAssertEqual(f.failedNames, [])
        XCTAssertEqual(service.terminate().exit, .exited(0))
    }

    /// The export folder is renamed away while the service runs (archive
    /// rotation: `mv out out.old`): later documents must go to the configured
    /// path (made anew), not follow the old folder to its new name.
    func testExportFolderRenamedAwayExportsToTheConfiguredPath() throws {
        let service = try RLService("export-rotated", config: rlConfig(folder: ["export.to": "out", "export.name": "{title}"]))
        let f = RLFolders(root: service.root.path)
        try service.start()
        service.waitUntilWatching()
        f.drop("first.pdf", rlPDF(title: "first"))
        waitUntil(timeout: 30, "the first export") { exists(f.out + "/first.pdf") }
        XCTAssertEqual(rename(f.out, f.out + ".old"), 0)
        f.drop("second.pdf", rlPDF(title: "second"))
        waitUntil(timeout: 30, "the second document") { f.doneNames.count == 2 || !service.isRunning }
        XCTAssertTrue(exists(f.out + "/second.pdf"), "exported to \(files(in: f.out + ".old")) in out.old instead of out/")
        XCTAssertEqual(files(in: f.out + ".old"), ["first.pdf"], "the rotated folder is left alone")
        XCTAssertEqual(service.terminate().exit, .exited(0))
    }

    /// export.to is a symbolic link to a folder (e.g. /srv/out -> /mnt/nas/out,
    /// a common setup): documents are exported into that folder.
    func testExportFolderBehindASymlinkIsUsed() throws {
        let service = try RLService("export-symlink", config: rlConfig(folder: ["export.to": "out", "export.name": "{title}"]))
        let f = RLFolders(root: service.root.path)
        let real = service.path("nas-out")
        XCTAssertEqual(mkdir(real, 0o755), 0)
        XCTAssertEqual(symlink(real, f.out), 0)
        try service.start()
        service.waitUntilWatching()
        f.drop("linked.pdf", rlPDF(title: "linked"))
        waitUntil(timeout: 10, "the export") { exists(real + "/linked.pdf") || f.finishedCount > 0 || !service.isRunning }
        XCTAssertTrue(exists(real + "/linked.pdf"), "not exported through the symlink:\n\(service.currentLog.suffix(1500))")
        XCTAssertEqual(service.terminate().exit, .exited(0))
    }

    private func exportFolderGoesAway(_ name: String, break breakIt: (String) throws -> Void, restore: (String) throws -> Void,
                                      file: StaticString = #filePath, line: UInt = #line) throws {
        let service = try RLService("export-\(name)", config: rlConfig(folder: ["export.to": "out", "export.name": "{title}"]))
        let f = RLFolders(root: service.root.path)
        try service.start()
        service.waitUntilWatching()
        f.drop("first.pdf", rlPDF(title: "first"))
        waitUntil(timeout: 30, "the first export", file: file, line: line) { exists(f.out + "/first.pdf") }

        try breakIt(f.out)
        let waiting = (1...3).map { "waiting-\($0).pdf" }
        for (i, name) in waiting.enumerated() { f.drop(name, rlPDF(title: "waiting \(i + 1)")) }
        waitUntil(timeout: 30, "the documents to be claimed and waiting", file: file, line: line) {
            f.leftInDrop.isEmpty && waiting.allSatisfy { service.currentLog.contains("\($0) waits: ") }
        }
        rlHolds(for: 3, "documents wait while the export folder is missing: nothing fails, nothing is done", file: file, line: line) {
            f.failedNames.isEmpty && f.doneNames == ["first.pdf"] && service.isRunning
        }
        let waitLines = service.currentLog.split(separator: "\n").filter { $0.contains(" waits: ") }
        for name in waiting {
            let mine = waitLines.filter { $0.contains("\(name) waits: ") }
            XCTAssertLessThanOrEqual(mine.count, 2, "the reason is logged once (per change), not at every retry:\n\(mine.joined(separator: "\n"))", file: file, line: line)
        }
        XCTAssertTrue(waitLines.contains { $0.contains(f.out) }, "the log names the export folder:\n\(waitLines.joined(separator: "\n"))", file: file, line: line)

        try restore(f.out)
        waitUntil(timeout: 60, "the waiting documents to be exported", file: file, line: line) {
            f.doneNames.count == 4 || !service.isRunning
        }
        XCTAssertEqual(Set(files(in: f.out)), ["waiting 1.pdf", "waiting 2.pdf", "waiting 3.pdf"], file: file, line: line)
        XCTAssertEqual(Set(f.doneNames), Set(["first.pdf"] + waiting), file: file, line: line)
        XCTAssertEqual(f.failedNames, [], file: file, line: line)
        XCTAssertEqual(f.allJobFolders, [], file: file, line: line)
        XCTAssertEqual(service.terminate().exit, .exited(0), file: file, line: line)
    }

    // MARK: - print submission cut in half

    /// The service was killed after CUPS created the job (Create-Job) but
    /// before the document reached it (Send-Document): the journal says
    /// "submitting" and CUPS holds a job of that name without a document. The
    /// restarted service must not follow that empty job until print.timeout:
    /// the document is printed, once.
    func testPrintJobWhoseDocumentNeverReachedCUPSIsPrintedAfterARestart() throws {
        let cups = try CUPSSandbox(queues: ["rl"])
        let service = try RLService("half-submitted", config: rlConfig(
            service: ["cups-server": cups.server], folder: ["print.printer": "rl", "print.name": "{title}", "print.timeout": "5s"]))
        let f = RLFolders(root: service.root.path)

        // The state a SIGKILL between Create-Job and Send-Document leaves.
        let pdf = rlPDF(title: "half")
        writeFile(f.staging + "/half.pdf", pdf)
        let area = try JobArea.open(path: f.instance("rl"))
        guard case .claimed(let job) = try JobFolder.claim("half.pdf", from: try Directory(path: f.staging), relativeFolder: "", into: area) else {
            return XCTFail("could not claim the document")
        }
        let staged = JobFolder.outputName(.print, ext: "pdf")
        let output = try job.create(staged)
        try output.write(pdf)
        var facts = DocumentFacts(type: .pdf)
        facts.pages = 1
        facts.title = "half"
        var generated = JournalRecord(.generated)
        generated.result = PipelineResult(facts: facts, outputs: [StagedOutput(
            destination: .print, files: [StagedFile(file: staged, role: .document)], format: .pdf, pages: "all", annotations: .flattenForPrint, ext: "pdf", pageCount: 1)], warnings: [])
        try job.journal.append(generated)
        let jobName = PrintDestination.jobName("half", job: job.id)
        var submitting = JournalRecord(.printSubmitting)
        submitting.destination = .print
        submitting.printJobName = jobName
        try job.journal.append(submitting)
        let connection = try CUPSConnection.open(server: cups.server, timeoutMilliseconds: 5000)
        let empty = try CUPSClient.createJob(connection, queue: "rl", jobName: jobName, options: [])
        let status = try CUPSClient(server: cups.server).jobStatus(id: empty)
        print("[half-submitted] CUPS job \(empty) without a document: \(status)")

        try service.start()
        waitUntil(timeout: 30, "the document to end") { f.finishedCount >= 1 || !service.isRunning }
        XCTAssertEqual(f.doneNames, ["half.pdf"], "not printed:\n\(f.errorReport())")
        let printed = rlCaptures(cups, queue: "rl").map { rlPrintedName($0.title) }
        XCTAssertEqual(printed, ["half"], "printed exactly once")
        XCTAssertEqual(service.terminate().exit, .exited(0))
    }
}

extension RLProcess {
    /// CPU time (user + system) a process has used, in seconds.
    static func cpuSeconds(_ pid: pid_t) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.range(of: ") ", options: .backwards) else { return 0 }
        let fields = stat[close.upperBound...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
