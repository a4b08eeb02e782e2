import Foundation
import XCTest
@testable import HotFolderKit

/// The `hotfolder` executable as an administrator uses it.
final class CLITests: XCTestCase {
    func hotfolder(_ arguments: [String], in directory: String? = nil) throws -> ProcessResult {
        try runProcess(try HotfolderExecutable.require(), arguments, currentDirectory: directory)
    }

    /// A scratch folder (kept until the test ends) with a drop folder and a
    /// configuration: folder `inbox` exporting from drop/ to out/, plus `extra` lines.
    func inboxConfiguration(_ extra: String = "") throws -> (temp: TemporaryFolder, file: String) {
        let temp = TemporaryFolder("hf-cli")
        addTeardownBlock { withExtendedLifetime(temp) {} }
        _ = temp.sub("drop")
        let file = temp.path + "/hf.conf"
        try ("[folder inbox]\npath = drop\nexport.to = out\n" + extra).write(toFile: file, atomically: true, encoding: .utf8)
        return (temp, file)
    }

    func testCheckAcceptsAGoodConfiguration() throws {
        let temp = TemporaryFolder("hf-cli")
        defer { withExtendedLifetime(temp) {} } // the folder goes only when the test ends
        let file = temp.path + "/good.conf"
        try "[folder inbox]\npath = drop\nexport.to = out\nexport.annotations = flatten\n".write(toFile: file, atomically: true, encoding: .utf8)
        let result = try hotfolder(["check", "--config", file])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("[folder inbox]"), result.stdout)
        XCTAssertTrue(result.stdout.contains("path = \(temp.path)/drop"), result.stdout)
        XCTAssertTrue(result.stdout.contains("export.annotations = flatten"), result.stdout)
        XCTAssertTrue(result.stdout.contains("# configuration OK: 1 folder"), result.stdout)
    }

    func testCheckRejectsABadConfigurationWithFileAndLine() throws {
        let temp = TemporaryFolder("hf-cli")
        defer { withExtendedLifetime(temp) {} } // the folder goes only when the test ends
        let file = temp.path + "/bad.conf"
        try """
        [folder inbox]
        path = drop
        setle = 1s
        export.to = out
        export.collision = bogus

        [folder nowhere]
        export.to = out2
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try hotfolder(["check", "--config", file])
        XCTAssertEqual(result.status, 78, "EX_CONFIG\n\(result.stdout)\(result.stderr)")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, result.stderr)
        XCTAssertTrue(lines.contains { $0.hasPrefix("\(file):3: unknown key setle") && $0.contains("did you mean \"settle\"?") }, result.stderr)
        XCTAssertTrue(lines.contains { $0.hasPrefix("\(file):5: export.collision must be rename, replace or fail") }, result.stderr)
        XCTAssertTrue(lines.contains { $0.hasPrefix("\(file):7: folder nowhere has no path") }, result.stderr)
        for line in lines {
            XCTAssertNotNil(line.firstMatch(of: /^[^:]+:\d+: ./), "not FILE:LINE: message: \(line)")
        }
        XCTAssertEqual(result.stdout, "", "nothing resolved is printed for a bad configuration")
    }

    func testCheckOfAMissingFile() throws {
        let result = try hotfolder(["check", "--config", "/nonexistent/hotfolder.conf"])
        XCTAssertEqual(result.status, 78)
        XCTAssertTrue(result.stderr.hasPrefix("/nonexistent/hotfolder.conf:0: cannot read the configuration"), result.stderr)
    }

    func testUsageErrors() throws {
        XCTAssertEqual(try hotfolder([]).status, 64)
        XCTAssertEqual(try hotfolder(["check"]).status, 64, "--config is required")
        XCTAssertEqual(try hotfolder(["frobnicate", "--config", "x"]).status, 64)
        XCTAssertEqual(try hotfolder(["check", "--bogus"]).status, 64)
        let help = try hotfolder(["check", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("usage: hotfolder run"), help.stdout)
    }

    /// `hotfolder --help` (no command) is how most people ask.
    func testHelpWithoutACommand() throws {
        let help = try hotfolder(["--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("usage: hotfolder run"), help.stdout)
    }

    func testProcessExitsNonZeroWhenOneFails() throws {
        let (temp, file) = try inboxConfiguration("export.pages = 2\n")
        let inbox = temp.sub("inbox")
        try TestPDF(pages: 3).write(to: inbox + "/a.pdf")
        writeFile(inbox + "/bad.pdf", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0])
        let result = try hotfolder(["process", "--config", file, "--folder", "inbox", "a.pdf", "bad.pdf"], in: inbox)
        XCTAssertNotEqual(result.status, 0, result.stdout)
        XCTAssertTrue(result.stdout.contains("OK a.pdf → \(temp.path)/out/a.pdf"), result.stdout)
        XCTAssertTrue(result.stdout.contains("FAILED bad.pdf:"), result.stdout)
        XCTAssertTrue(result.stdout.contains("PNG image"), result.stdout)
        XCTAssertEqual(PDFBytes.pageMarkers(readBytes(temp.path + "/out/a.pdf")), [2])
        XCTAssertTrue(exists(temp.path + "/drop/done/a.pdf"))
        XCTAssertTrue(readText(temp.path + "/drop/failed/bad.pdf.error.txt").contains("PNG image"))
    }

    func testProcessExitsZeroWhenAllSucceed() throws {
        let (temp, file) = try inboxConfiguration()
        try TestPDF(pages: 1).write(to: temp.path + "/one.pdf")
        try TestPDF(pages: 2).write(to: temp.path + "/two.pdf")
        let result = try hotfolder(["process", "--config", file, "--folder", "inbox", temp.path + "/one.pdf", temp.path + "/two.pdf"])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertEqual(files(in: temp.path + "/out"), ["one.pdf", "two.pdf"])
    }

    /// `process doc.pdf doc.pdf.ticket` (as a shell glob gives them): the
    /// ticket goes with its document and is not processed on its own.
    func testProcessADocumentNamedWithItsTicket() throws {
        let (temp, file) = try inboxConfiguration()
        try TestPDF(pages: 1).write(to: temp.path + "/one.pdf")
        try "name = named-by-ticket\n".write(toFile: temp.path + "/one.pdf.ticket", atomically: true, encoding: .utf8)
        let result = try hotfolder(["process", "--config", file, "--folder", "inbox", temp.path + "/one.pdf", temp.path + "/one.pdf.ticket"])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.contains("SKIPPED \(temp.path)/one.pdf.ticket: a job ticket, taken with its document"), result.stdout)
        XCTAssertEqual(files(in: temp.path + "/out"), ["named-by-ticket.pdf"])
        // On its own, a ticket is refused with the reason.
        try "copies = 1\n".write(toFile: temp.path + "/lone.pdf.ticket", atomically: true, encoding: .utf8)
        let lone = try hotfolder(["process", "--config", file, "--folder", "inbox", temp.path + "/lone.pdf.ticket"])
        XCTAssertEqual(lone.status, 1)
        XCTAssertTrue(lone.stdout.contains("is a job ticket, not a document: process its document lone.pdf"), lone.stdout)
    }

    /// `hotfolder journal`: every step of a processed document, readable, by job.
    func testJournalShowsEachStepOfAJob() throws {
        let (temp, file) = try inboxConfiguration()
        let none = try hotfolder(["journal", "--config", file])
        XCTAssertEqual(none.status, 0, none.stderr)
        XCTAssertTrue(none.stdout.contains("no journal: instance"), none.stdout)
        try TestPDF(pages: 2).write(to: temp.path + "/memo.pdf")
        XCTAssertEqual(try hotfolder(["process", "--config", file, "--folder", "inbox", temp.path + "/memo.pdf"]).status, 0)
        let result = try hotfolder(["journal", "--config", file, "--folder", "inbox"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("  20") }
        XCTAssertEqual(lines.map { $0.split(separator: " ", omittingEmptySubsequences: true)[2] },
                       ["claimed", "generated", "exporting", "exported", "finished", "closed"], result.stdout)
        XCTAssertTrue(lines[0].contains("→ memo.pdf"), lines[0])
        XCTAssertTrue(lines[1].contains("2 pages") && lines[1].contains("export: pdf"), lines[1])
        XCTAssertTrue(lines[3].contains("→ memo.pdf"), lines[3])
        XCTAssertTrue(result.stdout.contains("6 records of 1 job"), result.stdout)
        // One job by its id, as the log and the .error.txt name it.
        let id = String(lines[0].split(separator: " ", omittingEmptySubsequences: true)[1])
        let one = try hotfolder(["journal", "--config", file, id])
        XCTAssertTrue(one.stdout.contains("6 records of 1 job"), one.stdout)
        XCTAssertTrue(try hotfolder(["journal", "--config", file, "no-such-job"]).stdout.contains("0 records of 0 jobs"))
        XCTAssertEqual(try hotfolder(["journal", "--config", file, "--folder", "nope"]).status, 64)
        // A failed document: why, and where its original went.
        try "not a pdf\n".write(toFile: temp.path + "/bad.pdf", atomically: true, encoding: .utf8)
        XCTAssertEqual(try hotfolder(["process", "--config", file, "--folder", "inbox", temp.path + "/bad.pdf"]).status, 1)
        let failed = try hotfolder(["journal", "--config", file]).stdout
        let last = failed.split(separator: "\n").map(String.init).filter { $0.contains("  failed  ") }
        XCTAssertEqual(last.count, 1, failed)
        XCTAssertTrue(last.first?.contains("→ bad.pdf  failure identify the document") == true, failed)
    }

    func testProcessUnknownFolderOrMissingFile() throws {
        let (temp, file) = try inboxConfiguration()
        let missing = try hotfolder(["process", "--config", file, "--folder", "inbox", temp.path + "/missing.pdf"])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.stdout.contains("FAILED"), missing.stdout)
        let unknown = try hotfolder(["process", "--config", file, "--folder", "nope", temp.path + "/missing.pdf"])
        XCTAssertNotEqual(unknown.status, 0)
        XCTAssertEqual(try hotfolder(["process", "--config", file, temp.path + "/x.pdf"]).status, 64, "--folder is required")
    }

    // MARK: - hotfolder run

    /// `hotfolder run` in the background, its log in a file.
    final class Running {
        let process = Process()
        let logPath: String

        /// - Parameter launcher: a command that runs the service (its arguments follow).
        init(config: String, log: String, environment: [String: String] = [:], launcher: [String] = []) throws {
            logPath = log
            if !environment.isEmpty {
                process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            }
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            let handle = try XCTUnwrap(FileHandle(forWritingAtPath: log))
            let command = launcher + [try HotfolderExecutable.require(), "run", "--config", config]
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst())
            process.standardOutput = handle
            process.standardError = handle
            try process.run()
        }

        var log: String { readText(logPath) }

        /// How the process ended, for messages.
        var death: String {
            guard !process.isRunning else { return "running" }
            return process.terminationReason == .uncaughtSignal ? "signal \(process.terminationStatus)" : "exit status \(process.terminationStatus)"
        }

        /// SIGTERM, then the exit status (nil when it had died before).
        func terminate() -> Int32? {
            guard process.isRunning else { return nil }
            process.terminate()
            process.waitUntilExit()
            return process.terminationStatus
        }

        deinit {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
    }

    /// The drop folder goes away while the service runs (a share unmounted, a
    /// folder renamed or deleted by someone): the service must keep running,
    /// wait, and take documents again once the folder is back.
    func dropFolderGoesAway(_ folderLines: String, waitForNotice: Bool, remove: (String) throws -> Void,
                            file: StaticString = #filePath, line: UInt = #line) throws {
        let temp = TemporaryFolder("hf-run")
        defer { withExtendedLifetime(temp) {} } // the folder goes only when the test ends
        let drop = temp.sub("drop")
        let out = temp.path + "/out"
        let config = temp.path + "/hf.conf"
        try "[service]\ninstance = test\nlog-level = debug\n[folder f]\npath = drop\nsettle = 0\nexport.to = out\n\(folderLines)"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let run = try Running(config: config, log: temp.path + "/hotfolder.log")
        try TestPDF(pages: 1).write(to: drop + "/before.pdf")
        // Finished: exported and the original in done/ (finishing creates done/ by path).
        waitUntil(timeout: 30, "the first document", file: file, line: line) { exists(out + "/before.pdf") && exists(drop + "/done/before.pdf") }

        try remove(drop)
        if waitForNotice {
            waitUntil(timeout: 30, "the service to notice that the folder is gone", file: file, line: line) {
                run.log.contains("is gone") || !run.process.isRunning
            }
        }
        XCTAssertTrue(run.process.isRunning, "the service died when its drop folder went away:\n\(run.log.suffix(3000))", file: file, line: line)
        guard run.process.isRunning else { return }

        XCTAssertEqual(mkdir(drop, 0o755), 0, file: file, line: line)
        try TestPDF(pages: 2).write(to: drop + "/after.pdf")
        waitUntil(timeout: 30, "the document dropped after the folder came back", file: file, line: line) {
            exists(out + "/after.pdf") || !run.process.isRunning
        }
        XCTAssertTrue(run.process.isRunning, "the service died (\(run.death)):\n\(run.log.prefix(4000))", file: file, line: line)
        XCTAssertTrue(exists(out + "/after.pdf"), "not processed after the folder came back:\n\(run.log.prefix(4000))", file: file, line: line)
        XCTAssertEqual(run.terminate(), 0, "SIGTERM ends the service cleanly", file: file, line: line)
    }

    func testRunSurvivesDropFolderRenamedAway() throws {
        try dropFolderGoesAway("watch = inotify\n", waitForNotice: true) { drop in
            XCTAssertEqual(rename(drop, drop + ".old"), 0)
        }
    }

    func testRunSurvivesPolledDropFolderDeleted() throws {
        try dropFolderGoesAway("watch = poll\npoll-interval = 100ms\n", waitForNotice: true) { drop in
            try FileManager.default.removeItem(atPath: drop)
        }
    }

    /// Deleted and made anew at once (a script that resets the share): the
    /// old folder is gone for good, documents in the new one must be taken
    /// (here the safety rescan runs every 2 s, so it has every chance to).
    func testRunTakesDocumentsFromARecreatedDropFolder() throws {
        try dropFolderGoesAway("watch = inotify\nrescan = 2s\n", waitForNotice: false) { drop in
            try FileManager.default.removeItem(atPath: drop)
        }
    }

    /// inotify refuses the drop folder's watch (its watch limit: here 1 in a
    /// user namespace of the test's own, which the service's control folder
    /// takes): the service says why and how to raise it, and polls the folder
    /// instead, so documents are still taken, those already there and new ones.
    func testRunPollsAFolderInotifyCannotWatch() throws {
        try runWithInotifyLimit("max_inotify_watches", 1,
                                says: "cannot watch DROP: the inotify watch limit is reached (raise it with `sysctl fs.inotify.max_user_watches")
    }

    /// No inotify instance at all (the per-user limit, here 0): every folder
    /// is polled, and the log says how to raise the limit.
    func testRunPollsWhenInotifyCannotStart() throws {
        try runWithInotifyLimit("max_inotify_instances", 0,
                                says: "cannot watch DROP: cannot start inotify: the limit of inotify instances is reached (raise it with `sysctl fs.inotify.max_user_instances")
    }

    /// `hotfolder run` in a user namespace whose inotify `limit` (a file of
    /// /proc/sys/user) is `value`; the log must say `says` (DROP: the drop folder).
    func runWithInotifyLimit(_ limit: String, _ value: Int, says: String, file: StaticString = #filePath, line: UInt = #line) throws {
        guard (try? runProcess("/usr/bin/unshare", ["-U", "-r", "true"]))?.status == 0 else {
            throw XCTSkip("no user namespaces here")
        }
        let temp = TemporaryFolder("hf-run")
        defer { withExtendedLifetime(temp) {} }
        let drop = temp.sub("drop")
        let config = temp.path + "/hf.conf"
        try "[service]\ninstance = test\n[folder f]\npath = drop\nsettle = 0\npoll-interval = 100ms\nexport.to = out\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        try TestPDF(pages: 1).write(to: drop + "/before.pdf")
        let run = try Running(config: config, log: temp.path + "/hotfolder.log", launcher: [
            "/usr/bin/unshare", "-U", "-r", "/bin/sh", "-c", "echo \(value) > /proc/sys/user/\(limit) && exec \"$@\"", "sh",
        ])
        waitUntil(timeout: 30, "the fallback to polling", file: file, line: line) { run.log.contains("polling the folder every") || !run.process.isRunning }
        XCTAssertTrue(run.log.contains(says.replacingOccurrences(of: "DROP", with: drop)), run.log, file: file, line: line)
        waitUntil(timeout: 30, "the document that was there", file: file, line: line) { exists(drop + "/done/before.pdf") || !run.process.isRunning }
        try TestPDF(pages: 2).write(to: drop + "/after.pdf")
        waitUntil(timeout: 30, "a document dropped afterwards", file: file, line: line) { exists(drop + "/done/after.pdf") || !run.process.isRunning }
        XCTAssertEqual(files(in: temp.path + "/out"), ["after.pdf", "before.pdf"], run.log, file: file, line: line)
        XCTAssertEqual(run.log.components(separatedBy: "polling the folder every").count - 1, 1, "said once:\n\(run.log)", file: file, line: line)
        XCTAssertEqual(run.terminate(), 0, file: file, line: line)
    }

    /// The inotify queue overflows (its length, max_queued_events, is 1 for
    /// this service: the kernel fixes it when inotify starts, so it is put back
    /// for everyone at once): events are lost, the service says so and
    /// rescans, and every document of a burst is processed once.
    func testInotifyQueueOverflowLosesNoDocument() throws {
        let setting = "/proc/sys/fs/inotify/max_queued_events"
        let before = readText(setting).trimmingCharacters(in: .whitespacesAndNewlines)
        guard getuid() == 0, !before.isEmpty, (try? "1".write(toFile: setting, atomically: false, encoding: .utf8)) != nil else {
            throw XCTSkip("setting \(setting) needs root")
        }
        var restored = false
        let restore = { if !restored { restored = true; try? before.write(toFile: setting, atomically: false, encoding: .utf8) } }
        defer { restore() }
        let temp = TemporaryFolder("hf-run")
        defer { withExtendedLifetime(temp) {} }
        let drop = temp.sub("drop")
        let staging = temp.sub("staging")
        let config = temp.path + "/hf.conf"
        try "[service]\ninstance = test\n[folder f]\npath = drop\nsettle = 0\nexport.to = out\n".write(toFile: config, atomically: true, encoding: .utf8)
        let run = try Running(config: config, log: temp.path + "/hotfolder.log")
        waitUntil(timeout: 30, "the service to watch") { run.log.contains("watching ") || !run.process.isRunning }
        restore()
        let count = 400
        let bytes = TestPDF(pages: 1).bytes
        for i in 0..<count { writeFile(staging + "/b\(i).pdf", bytes) }
        for i in 0..<count { XCTAssertEqual(rename(staging + "/b\(i).pdf", drop + "/b\(i).pdf"), 0) }
        waitUntil(timeout: 120, "every document") { files(in: drop + "/done").count >= count || !run.process.isRunning }
        XCTAssertTrue(run.log.contains("inotify queue overflowed; rescanning the folder"), "no overflow happened, so this shows nothing:\n\(run.log.suffix(2000))")
        XCTAssertEqual(files(in: drop + "/done").count, count)
        XCTAssertEqual(files(in: temp.path + "/out").count, count, "each exported once")
        XCTAssertEqual(files(in: drop).filter { $0.hasSuffix(".pdf") }, [], "none left behind")
        XCTAssertEqual(run.terminate(), 0)
    }

    func testRunStopsCleanlyOnSIGTERM() throws {
        let temp = TemporaryFolder("hf-run")
        defer { withExtendedLifetime(temp) {} } // the folder goes only when the test ends
        let drop = temp.sub("drop")
        let config = temp.path + "/hf.conf"
        try "[service]\ninstance = test\n[folder f]\npath = drop\nsettle = 0\nexport.to = out\n".write(toFile: config, atomically: true, encoding: .utf8)
        // Its temporary files go to TMPDIR (the inotify hub's control folder): none is left behind.
        let tmp = temp.sub("tmp")
        let run = try Running(config: config, log: temp.path + "/hotfolder.log", environment: ["TMPDIR": tmp])
        try TestPDF(pages: 3).write(to: drop + "/a.pdf")
        waitUntil(timeout: 30, "the document") { exists(temp.path + "/out/a.pdf") }
        XCTAssertEqual(try summarize(temp.path + "/out/a.pdf").pages, 3)
        XCTAssertTrue(files(in: tmp).contains { $0.hasPrefix("hotfolder-inotify-") }, "the control folder is in TMPDIR while the service runs: \(files(in: tmp))")
        XCTAssertEqual(run.terminate(), 0)
        XCTAssertTrue(run.log.contains("stopped"), run.log)
        XCTAssertEqual(files(in: tmp), [], "left in TMPDIR after a clean stop")
    }
}
