import Foundation
import Synchronization
import XCTest
@testable import HotFolderKit

/// Hostile drop folders: whatever lands must never make the service read, move,
/// overwrite or disclose anything outside what it owns, nor hang it.
final class SecurityTests: XCTestCase {
    var temp: TemporaryFolder!
    var drop: String { temp.path + "/drop" }
    var out: String { temp.path + "/out" }
    var outside: String { temp.path + "/outside" }

    override func setUp() {
        temp = TemporaryFolder("hf-sec")
        _ = temp.sub("drop")
        _ = temp.sub("outside")
    }

    override func tearDown() { temp = nil }

    func service(_ lines: String = "", recorder: Recorder) throws -> HotFolderService {
        let text = "[service]\ninstance = test\n[folder f]\npath = drop\nsettle = 0\nexport.to = out\n" + lines
        let file = temp.path + "/hf.conf"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return HotFolderService(configuration: try ServiceConfiguration.load(file: file), delegate: recorder, logToStandardError: false)
    }

    func secret() throws -> String {
        let path = outside + "/secret.pdf"
        _ = try TestPDF(pages: 1, title: "secret").write(to: path)
        return path
    }

    func testSymlinkToAFileOutsideIsNotReadAndTheTargetStays() throws {
        let target = try secret()
        let before = readBytes(target)
        let recorder = Recorder()
        let s = try service(recorder: recorder)
        s.start()
        defer { s.stop() }
        XCTAssertEqual(symlink(target, drop + "/link.pdf"), 0)
        waitUntil(timeout: 30, "the link's outcome") { recorder.outcomes.count == 1 }
        let failure = try XCTUnwrap(recorder.outcomes.first?.failure)
        XCTAssertTrue(failure.reason.contains("symbolic link"), failure.reason)
        XCTAssertEqual(readBytes(target), before, "the target is untouched")
        XCTAssertTrue(files(in: out).isEmpty, "nothing of the target was exported")
        var st = stat()
        XCTAssertEqual(lstat(drop + "/failed/link.pdf", &st), 0)
        XCTAssertEqual(st.st_mode & S_IFMT, S_IFLNK, "the link itself moved to failed/, not its target")
    }

    func testHardLinkIsNotTakenAsADocument() throws {
        let target = try secret()
        let recorder = Recorder()
        let s = try service(recorder: recorder)
        s.start()
        defer { s.stop() }
        XCTAssertEqual(link(target, drop + "/hard.pdf"), 0)
        waitUntil(timeout: 30, "the hard link's outcome") { recorder.outcomes.count == 1 }
        XCTAssertTrue(recorder.outcomes.first?.failure?.reason.contains("hard link") == true, "\(recorder.outcomes)")
        XCTAssertTrue(files(in: out).isEmpty)
        XCTAssertTrue(exists(target), "the other name of the file is untouched")
    }

    func testFIFODoesNotHangTheService() throws {
        let recorder = Recorder()
        let s = try service(recorder: recorder)
        s.start()
        defer { s.stop() }
        XCTAssertEqual(mkfifo(drop + "/pipe.pdf", 0o644), 0)
        try TestPDF(pages: 1).write(to: drop + "/after.pdf")
        waitUntil(timeout: 30, "both outcomes") { recorder.outcomes.count == 2 }
        XCTAssertTrue(recorder.outcomes(for: "pipe.pdf").first?.failure?.reason.contains("FIFO") == true, "\(recorder.outcomes)")
        XCTAssertTrue(recorder.outcomes(for: "after.pdf").first?.succeeded == true)
    }

    func testSymlinkedSubfolderIsNotFollowedInRecursiveMode() throws {
        _ = try secret()
        let recorder = Recorder()
        let s = try service("recursive = yes\n", recorder: recorder)
        s.start()
        defer { s.stop() }
        XCTAssertEqual(symlink(outside, drop + "/sub"), 0)
        try TestPDF(pages: 1).write(to: drop + "/marker.pdf")
        waitUntil(timeout: 30, "the marker and the link") { recorder.outcomes.count >= 2 }
        XCTAssertTrue(exists(outside + "/secret.pdf"), "nothing was taken through the link")
        XCTAssertEqual(files(in: out), ["marker.pdf"])
    }

    /// A helper thread keeps swapping a subfolder of a recursive drop folder
    /// for a symlink to a folder outside while the service works: nothing
    /// outside is ever claimed or moved.
    func testSymlinkSwapRaceCannotRedirectTheService() throws {
        let recorder = Recorder()
        let s = try service("recursive = yes\n", recorder: recorder)
        s.start()
        defer { s.stop() }
        for i in 0..<20 { _ = try TestPDF(pages: 1, title: "outside \(i)").write(to: outside + "/o\(i).pdf") }
        let sub = drop + "/sub"
        let stop = Mutex(false)
        let outsidePath = outside
        let swapper = Thread {
            var i = 0
            while !stop.withLock({ $0 }) {
                // A real folder with a document in it, then a link to outside in its place.
                mkdir(sub, 0o755)
                _ = try? TestPDF(pages: 1, title: "inside \(i)").write(to: sub + "/i\(i).pdf")
                rename(sub, sub + "-\(i)")
                symlink(outsidePath, sub)
                usleep(2_000)
                unlink(sub)
                i += 1
            }
        }
        swapper.start()
        let deadline = Date().addingTimeInterval(3)
        while Date() < deadline { usleep(50_000) }
        stop.withLock { $0 = true }
        waitUntil(timeout: 60, "the service to go idle") { s.pendingJobs == 0 }
        XCTAssertEqual(files(in: outside).count, 20, "no file outside was claimed or moved")
        for name in files(in: out) {
            let bytes = readBytes(out + "/" + name)
            XCTAssertFalse(PDFBytes.contains(bytes, "outside "), "\(name) came from outside the drop folder")
        }
    }

    /// The export folder replaced by a symlink to elsewhere after the service
    /// opened it: the link is not followed; the document waits, with the reason,
    /// and nothing is written through the link.
    func testExportFolderSwappedForASymlinkDoesNotRedirectWrites() throws {
        let recorder = Recorder()
        let s = try service(recorder: recorder)
        s.start()
        defer { s.stop() }
        try TestPDF(pages: 1).write(to: drop + "/first.pdf")
        waitUntil(timeout: 30, "the first export") { exists(out + "/first.pdf") }
        XCTAssertEqual(rename(out, out + ".moved"), 0)
        XCTAssertEqual(symlink(outside, out), 0)
        try TestPDF(pages: 1).write(to: drop + "/second.pdf")
        waitUntil(timeout: 30, "the reason the document waits") { recorder.logText.contains("symbolic link") }
        XCTAssertEqual(recorder.outcomes.count, 1, "the second document waits, it does not fail")
        XCTAssertTrue(files(in: outside).isEmpty, "nothing was written through the link")
        XCTAssertFalse(exists(out + ".moved/second.pdf"))
    }

    func testOversizedFileFailsWithTheReason() throws {
        let recorder = Recorder()
        let s = try service("max-file-size = 1K\n", recorder: recorder)
        s.start()
        defer { s.stop() }
        try TestPDF(pages: 30).write(to: drop + "/big.pdf")
        waitUntil(timeout: 30, "the outcome") { recorder.outcomes.count == 1 }
        let failure = try XCTUnwrap(recorder.outcomes.first?.failure)
        XCTAssertTrue(failure.reason.contains("max-file-size"), failure.reason)
        XCTAssertTrue(exists(drop + "/failed/big.pdf.error.txt"))
    }

    func testHostileTitlesStayInsideTheExportFolder() throws {
        let titles = ["../../etc/passwd", "a\u{0}b/c", String(repeating: "Ω", count: 10_000), "invoice\u{202E}fdp.exe", "..", ".hidden", "$(touch pwned)"]
        let recorder = Recorder()
        let s = try service("export.name = {title}\n", recorder: recorder)
        s.start()
        defer { s.stop() }
        for (i, title) in titles.enumerated() {
            try TestPDF(pages: 1, title: title).write(to: drop + "/t\(i).pdf")
        }
        waitUntil(timeout: 60, "every outcome") { recorder.outcomes.count == titles.count }
        XCTAssertTrue(recorder.outcomes.allSatisfy(\.succeeded), "\(recorder.outcomes.map { $0.failure?.description ?? "ok" })")
        let names = files(in: out) + ((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).filter { $0.hasPrefix(".") }
        XCTAssertEqual(Set(names).count, titles.count, "\(names)")
        for name in names {
            XCTAssertFalse(name.contains("/"))
            XCTAssertFalse(name.hasPrefix("."), name)
            XCTAssertLessThanOrEqual(name.utf8.count, 255)
            XCTAssertFalse(name.unicodeScalars.contains { $0.value == 0x202E || $0.value < 0x20 }, name)
        }
        XCTAssertFalse(exists(temp.path + "/etc/passwd"))
        XCTAssertFalse(exists(temp.path + "/pwned") || exists(FileManager.default.currentDirectoryPath + "/pwned"))
    }

    /// No shell anywhere: a file named like a command substitution is just a name.
    func testShellMetacharactersInNamesDoNothing() throws {
        let recorder = Recorder()
        let s = try service(recorder: recorder)
        s.start()
        defer { s.stop() }
        let name = "$(touch pwned).pdf"
        try TestPDF(pages: 1).write(to: drop + "/" + name)
        try TestPDF(pages: 1).write(to: drop + "/`touch pwned2`;rm -rf x.pdf")
        waitUntil(timeout: 30, "both outcomes") { recorder.outcomes.count == 2 }
        XCTAssertTrue(recorder.outcomes.allSatisfy(\.succeeded))
        XCTAssertTrue(exists(out + "/$(touch pwned).pdf"))
        for dir in [temp.path, drop, out, FileManager.default.currentDirectoryPath] {
            XCTAssertFalse(exists(dir + "/pwned") || exists(dir + "/pwned2"), dir)
        }
    }

    func testOutputsUseTheUmaskNotTheInputsPermissions() throws {
        let recorder = Recorder()
        let s = try service(recorder: recorder)
        let old = umask(0o027)
        defer { umask(old) }
        s.start()
        defer { s.stop() }
        let input = drop + "/open.pdf"
        try TestPDF(pages: 1).write(to: drop + "/.staging.pdf")
        chmod(drop + "/.staging.pdf", 0o777)
        XCTAssertEqual(rename(drop + "/.staging.pdf", input), 0)
        waitUntil(timeout: 30, "the export") { exists(out + "/open.pdf") }
        var st = stat()
        XCTAssertEqual(stat(out + "/open.pdf", &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o640, "created with umask 027, not copied from the input's 777")
    }

    /// Started as root with `user =`, the service becomes that user.
    func testRootDropsToTheConfiguredUser() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root") }
        guard let nobody = getpwnam("nobody") else { throw XCTSkip("no user nobody") }
        chmod(temp.path, 0o777)
        chmod(drop, 0o777)
        let config = temp.path + "/root.conf"
        try "[service]\ninstance = test\nuser = nobody\n[folder f]\npath = drop\nsettle = 0\nexport.to = out\n".write(toFile: config, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try HotfolderExecutable.require())
        process.arguments = ["run", "--config", config]
        let log = temp.path + "/root.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: log))
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        try TestPDF(pages: 1).write(to: drop + "/a.pdf")
        waitUntil(timeout: 30, "the export") { exists(out + "/a.pdf") }
        let status = readText("/proc/\(process.processIdentifier)/status")
        let uidLine = status.split(separator: "\n").first { $0.hasPrefix("Uid:") } ?? ""
        XCTAssertTrue(uidLine.split(separator: "\t").dropFirst().allSatisfy { $0 == "\(nobody.pointee.pw_uid)" }, String(uidLine))
        var st = stat()
        XCTAssertEqual(stat(out + "/a.pdf", &st), 0)
        XCTAssertEqual(st.st_uid, nobody.pointee.pw_uid, "outputs belong to the service user")
    }
}
