import Foundation
import Glibc
import XCTest
@testable import HotFolderKit

/// The real `hotfolder run` process under crashes (kill -9), restarts,
/// signals (SIGTERM, SIGHUP) and several instances on one folder: no document
/// is ever lost, left behind or delivered twice.
final class ReliabilityTests: XCTestCase {
    // MARK: - kill -9 at random moments

    /// 300 documents dropped in waves; the service is SIGKILLed ten times
    /// at random moments (while documents flow, and during its own start and
    /// recovery) and restarted each time. In the end every document is in
    /// done/ once, exported once (no "(2)" copy, none missing), every export is
    /// a whole PDF, and nothing is left in the drop folder or the job folders.
    func testKill9AtRandomMomentsExportsEveryDocumentExactlyOnce() throws {
        var rng = RLRandom.forTest("kill9-export")
        let service = try RLService("kill-export", config: rlConfig(folder: ["export.to": "out", "export.name": "{title}"]))
        let f = RLFolders(root: service.root.path)
        let inputs = RLInputs(count: 300, prefix: "kx")
        try rlChaos(service, f, inputs, kills: 10, rng: &rng)

        rlAssertEachDocumentDoneOnce(f, inputs)
        let exports = files(in: f.out)
        XCTAssertEqual(exports.count, inputs.count, "one export per document: \(exports.filter(rlIsNumberedCopy).prefix(20))")
        XCTAssertEqual(Set(exports), Set(inputs.titles.map { $0 + ".pdf" }), "every document exported under its title")
        XCTAssertEqual(exports.filter(rlIsNumberedCopy), [], "no document exported twice")
        XCTAssertEqual(regularFiles(in: f.out).filter { $0.hasPrefix(".") }, [], "no temporary export file left")
        var broken: [String] = []
        for name in exports {
            do {
                let (pages, title) = try rlOpen(f.out + "/" + name)
                if pages != 1 || title.map({ $0 + ".pdf" }) != name { broken.append("\(name): \(pages) pages, title \(title ?? "-")") }
            } catch {
                broken.append("\(name): \(error)")
            }
        }
        XCTAssertEqual(broken, [], "every export is a whole PDF")
        XCTAssertEqual(service.lingeringWorkers, [], "worker processes of a killed service exit by themselves once their stdin closes")
    }

    /// The same with a print destination on a private cupsd (200 documents,
    /// eight SIGKILLs): every document is printed exactly once (the capture
    /// backend saw each job name once), none twice, none lost, and CUPS holds
    /// no unfinished job at the end (a crash between Create-Job and
    /// Send-Document leaves one without its document).
    func testKill9AtRandomMomentsPrintsEveryDocumentExactlyOnce() throws {
        var rng = RLRandom.forTest("kill9-print")
        let cups = try CUPSSandbox(queues: ["rl"])
        let service = try RLService("kill-print", config: rlConfig(
            service: ["cups-server": cups.server],
            folder: ["print.printer": "rl", "print.name": "{title}", "print.timeout": "90s"]))
        let f = RLFolders(root: service.root.path)
        let inputs = RLInputs(count: 200, prefix: "px")
        try rlChaos(service, f, inputs, kills: 8, rng: &rng, timeout: 150) {
            "CUPS jobs not completed:\n" + ((try? CUPSSandbox.run("/usr/bin/lpstat", ["-h", cups.server, "-o"])) ?? "?")
        }

        rlAssertEachDocumentDoneOnce(f, inputs)
        let printed = rlCaptures(cups, queue: "rl").map { rlPrintedName($0.title) }
        let twice = Dictionary(grouping: printed) { $0 }.filter { $0.value.count > 1 }.keys.sorted()
        XCTAssertEqual(twice, [], "printed more than once")
        XCTAssertEqual(Set(printed), Set(inputs.titles), "every document printed; missing: \(Set(inputs.titles).subtracting(printed).sorted().prefix(20))")
        XCTAssertEqual(printed.count, inputs.count)
        let pending = (try? CUPSSandbox.run("/usr/bin/lpstat", ["-h", cups.server, "-o"])) ?? "?"
        XCTAssertEqual(pending.trimmingCharacters(in: .whitespacesAndNewlines), "", "no CUPS job left unfinished")
        XCTAssertEqual(service.lingeringWorkers, [])
    }

    // MARK: - several instances on one folder

    /// Two machines on one NFS share: two services with different instance
    /// names on the same drop folder. Each document is claimed, exported and
    /// moved to done/ exactly once in total, and both did some of the work.
    func testTwoInstancesOnOneFolderDeliverEachDocumentOnce() throws {
        let root = TemporaryFolder("hf-rl-instances")
        let folder = ["export.to": "out", "export.name": "{title}"]
        let alpha = try RLService("alpha", config: rlConfig(service: ["instance": "alpha"], folder: folder), in: root)
        let beta = try RLService("beta", config: rlConfig(service: ["instance": "beta"], folder: folder), in: root)
        let f = RLFolders(root: root.path)
        try alpha.start()
        try beta.start()
        alpha.waitUntilWatching()
        beta.waitUntilWatching()
        let inputs = RLInputs(count: 300, prefix: "ix")
        for i in 0..<inputs.count { f.drop(inputs.names[i], inputs.bytes(i)) }
        waitUntil(timeout: 120, "both instances to finish 300 documents") {
            (f.finishedCount >= inputs.count && f.allJobFolders.isEmpty && f.leftInDrop.isEmpty) || !alpha.isRunning || !beta.isRunning
        }
        XCTAssertTrue(alpha.isRunning && beta.isRunning, "an instance died:\n\(alpha.log.suffix(2000))\n\(beta.log.suffix(2000))")
        rlAssertEachDocumentDoneOnce(f, inputs)
        let exports = files(in: f.out)
        XCTAssertEqual(exports.count, inputs.count)
        XCTAssertEqual(Set(exports), Set(inputs.titles.map { $0 + ".pdf" }))
        XCTAssertEqual(exports.filter(rlIsNumberedCopy), [], "no document exported twice")
        let claimedByAlpha = alpha.count(": claimed ")
        let claimedByBeta = beta.count(": claimed ")
        print("[instances] alpha claimed \(claimedByAlpha), beta claimed \(claimedByBeta)")
        XCTAssertEqual(claimedByAlpha + claimedByBeta, inputs.count, "each document claimed once in total")
        XCTAssertGreaterThan(claimedByAlpha, 0, "alpha did some of the work")
        XCTAssertGreaterThan(claimedByBeta, 0, "beta did some of the work")
        XCTAssertEqual(alpha.terminate().exit, .exited(0))
        XCTAssertEqual(beta.terminate().exit, .exited(0))
    }

    /// A second service started with the SAME instance name (a stand-by, or a
    /// mistake) must not take the folder while the first holds it; when the
    /// first is killed, the second takes over and resumes its journaled jobs:
    /// still every document exactly once.
    func testStandbyWithTheSameInstanceTakesOverAfterACrash() throws {
        let root = TemporaryFolder("hf-rl-standby")
        let config = rlConfig(folder: ["export.to": "out", "export.name": "{title}"])
        let primary = try RLService("primary", config: config, in: root)
        let standby = try RLService("standby", config: config, in: root)
        let f = RLFolders(root: root.path)
        try primary.start()
        primary.waitUntilWatching()
        try standby.start()
        waitUntil(timeout: 30, "the stand-by to find the folder taken") { standby.log.contains("another hotfolder with instance \"rl\" serves this folder") }
        XCTAssertEqual(standby.count("watching "), 0, "the stand-by does not watch a folder it cannot lock")
        let inputs = RLInputs(count: 120, prefix: "sx")
        for i in 0..<inputs.count { f.drop(inputs.names[i], inputs.bytes(i)) }
        waitUntil(timeout: 60, "some documents done") { f.finishedCount >= 10 }
        primary.kill9()
        waitUntil(timeout: 60, "the stand-by to take over and finish") {
            (f.finishedCount >= inputs.count && f.allJobFolders.isEmpty && f.leftInDrop.isEmpty) || !standby.isRunning
        }
        rlAssertEachDocumentDoneOnce(f, inputs)
        let exports = files(in: f.out)
        XCTAssertEqual(Set(exports), Set(inputs.titles.map { $0 + ".pdf" }))
        XCTAssertEqual(exports.filter(rlIsNumberedCopy), [], "no document exported twice")
        XCTAssertGreaterThan(standby.count("watching "), 0)
        XCTAssertEqual(standby.terminate().exit, .exited(0))
    }

    // MARK: - graceful lifecycle

    /// SIGTERM while documents flow: the service exits 0 within
    /// shutdown-timeout, leaves no worker behind, and a restart finishes every
    /// document exactly once.
    func testSIGTERMWhileDocumentsFlowExitsCleanlyAndARestartFinishesEachOnce() throws {
        let service = try RLService("sigterm", config: rlConfig(
            service: ["shutdown-timeout": "10s"], folder: ["export.to": "out", "export.name": "{title}"]))
        let f = RLFolders(root: service.root.path)
        try service.start()
        service.waitUntilWatching()
        let inputs = RLInputs(count: 150, prefix: "tx")
        for i in 0..<inputs.count { f.drop(inputs.names[i], inputs.bytes(i)) }
        waitUntil(timeout: 60, "the first documents") { f.finishedCount >= 10 }
        let (exit, seconds) = service.terminate(timeout: 30)
        XCTAssertEqual(exit, .exited(0), service.currentLog.suffix(2000).description)
        XCTAssertLessThan(seconds, 10 + 5, "stopped within shutdown-timeout")
        XCTAssertTrue(service.currentLog.contains("stopped"))
        XCTAssertEqual(service.lingering(grace: 5), [], "no worker process outlives the service")
        print("[sigterm] \(f.finishedCount) of \(inputs.count) done at the stop, in \(String(format: "%.2f", seconds)) s")

        try service.start()
        waitUntil(timeout: 90, "the restarted service to finish") {
            (f.finishedCount >= inputs.count && f.allJobFolders.isEmpty && f.leftInDrop.isEmpty) || !service.isRunning
        }
        rlAssertEachDocumentDoneOnce(f, inputs)
        let exports = files(in: f.out)
        XCTAssertEqual(Set(exports), Set(inputs.titles.map { $0 + ".pdf" }))
        XCTAssertEqual(exports.filter(rlIsNumberedCopy), [])
        XCTAssertEqual(service.terminate().exit, .exited(0))
    }

    /// SIGTERM while one document takes long (a decompression bomb): the
    /// service still exits 0 within shutdown-timeout, its busy worker does not
    /// keep running on its own, and the job stays journaled and resumes at the
    /// next start (where it ends with the job-timeout reason).
    func testSIGTERMDuringALongJobExitsWithinShutdownTimeoutAndTheJobResumes() throws {
        let folder = ["export.to": "out"]
        let service = try RLService("long-job", config: rlConfig(service: ["shutdown-timeout": "1s", "job-timeout": "5m"], folder: folder))
        let f = RLFolders(root: service.root.path)
        try service.start()
        service.waitUntilWatching()
        f.drop("bomb.pdf", RLBomb.slow(megabytes: 2048))
        waitUntil(timeout: 30, "the bomb to be claimed and generating") {
            service.currentLog.contains("claimed bomb.pdf") && !service.workers.isEmpty
        }
        let (exit, seconds) = service.terminate(timeout: 30)
        XCTAssertEqual(exit, .exited(0), service.currentLog.suffix(2000).description)
        XCTAssertLessThan(seconds, 1 + 4, "stopped within shutdown-timeout (1 s) despite the running job")
        XCTAssertTrue(service.currentLog.contains("still running after shutdown-timeout"), service.currentLog)
        let lingering = service.lingering(grace: 3)
        XCTAssertEqual(lingering, [], "the busy worker kept generating for a service that had exited")
        XCTAssertEqual(f.allJobFolders.count, 1, "the interrupted job stays journaled")
        // The worker killed at the stop is the service's doing, not the
        // document's: it must not be failed (e.g. as "killed ... job-memory").
        XCTAssertEqual(f.failedNames + f.doneNames, [], "the interrupted document was given an outcome at the stop:\n\(f.errorReport())")
        XCTAssertFalse(service.currentLog.contains("failed: bomb.pdf"), service.currentLog)

        try service.rewriteConfig(rlConfig(service: ["shutdown-timeout": "1s", "job-timeout": "1s"], folder: folder))
        try service.start()
        waitUntil(timeout: 30, "the resumed job to fail by job-timeout") { exists(f.failed + "/bomb.pdf.error.txt") || !service.isRunning }
        XCTAssertTrue(service.currentLog.contains("resuming bomb.pdf"), service.currentLog)
        let error = readText(f.failed + "/bomb.pdf.error.txt")
        XCTAssertTrue(error.contains("longer than job-timeout (1 s)"), error)
        XCTAssertEqual(service.terminate().exit, .exited(0))
    }

    /// SIGHUP with a configuration that has an error: logged as NOT reloaded,
    /// and the service goes on with the configuration it has.
    func testSIGHUPWithABrokenConfigurationKeepsTheRunningOne() throws {
        let service = try RLService("hup-broken", config: rlConfig(folder: ["export.to": "out", "export.name": "{title}"]))
        let f = RLFolders(root: service.root.path)
        try service.start()
        service.waitUntilWatching()
        f.drop("a.pdf", rlPDF(title: "before"))
        waitUntil(timeout: 30, "the first export") { exists(f.out + "/before.pdf") }

        try service.rewriteConfig(rlConfig(folder: ["export.to": "out", "export.name": "changed {title}", "export.collision": "bogus"]))
        service.hangup()
        waitUntil(timeout: 30, "the reload to be refused") { service.log.contains("NOT reloaded") || !service.isRunning }
        XCTAssertTrue(service.log.contains("export.collision must be rename, replace or fail"), "the log names the problem:\n\(service.log)")
        f.drop("b.pdf", rlPDF(title: "after"))
        waitUntil(timeout: 30, "the next export") { exists(f.out + "/after.pdf") || exists(f.out + "/changed after.pdf") || !service.isRunning }
        XCTAssertTrue(exists(f.out + "/after.pdf"), "exported with the configuration that was running: \(files(in: f.out))")
        XCTAssertTrue(service.isRunning)
        XCTAssertEqual(service.terminate().exit, .exited(0))
    }

    /// SIGHUP with a changed configuration: documents dropped afterwards use it.
    func testSIGHUPWithAChangedConfigurationAppliesToLaterDocuments() throws {
        let service = try RLService("hup-changed", config: rlConfig(folder: ["export.to": "out", "export.name": "{title}"]))
        let f = RLFolders(root: service.root.path)
        try service.start()
        service.waitUntilWatching()
        f.drop("a.pdf", rlPDF(title: "before"))
        waitUntil(timeout: 30, "the first export") { exists(f.out + "/before.pdf") }

        try service.rewriteConfig(rlConfig(folder: ["export.to": "out", "export.name": "renamed {title}"]))
        service.hangup()
        waitUntil(timeout: 30, "the reload") { service.log.contains("configuration reloaded") || !service.isRunning }
        f.drop("b.pdf", rlPDF(title: "after"))
        waitUntil(timeout: 30, "the next export") { exists(f.out + "/renamed after.pdf") || exists(f.out + "/after.pdf") || !service.isRunning }
        XCTAssertTrue(exists(f.out + "/renamed after.pdf"), "exported with the new export.name: \(files(in: f.out))")
        XCTAssertEqual(files(in: f.out), ["before.pdf", "renamed after.pdf"])
        XCTAssertEqual(service.terminate().exit, .exited(0))
    }

    /// SIGHUP (a changed folder) while documents flow, one of them a slow one
    /// (a 50 KB PDF that takes qpdf seconds) so that a job is surely running at
    /// the reload: the folder is re-opened under the new configuration, and
    /// still every document is delivered exactly once (under the old or the new
    /// name, never both, never twice), and no job is run a second time.
    func testSIGHUPWhileDocumentsFlowDeliversEachDocumentOnce() throws {
        let service = try RLService("hup-flow", config: rlConfig(folder: ["export.to": "out", "export.name": "{title}"]))
        let f = RLFolders(root: service.root.path)
        try service.start()
        service.waitUntilWatching()
        f.drop("slow.pdf", RLBomb.slow(megabytes: 1024))
        waitUntil(timeout: 30, "the slow document to be claimed") { service.log.contains("claimed slow.pdf") }
        let inputs = RLInputs(count: 200, prefix: "hx")
        for i in 0..<inputs.count { f.drop(inputs.names[i], inputs.bytes(i)) }
        waitUntil(timeout: 60, "the first documents") { f.finishedCount >= 20 }
        XCTAssertFalse(exists(f.done + "/slow.pdf"), "the slow document is still running at the reload")
        try service.rewriteConfig(rlConfig(folder: ["export.to": "out", "export.name": "new {title}"]))
        service.hangup()
        waitUntil(timeout: 30, "the reload") { service.log.contains("configuration reloaded") || !service.isRunning }
        waitUntil(timeout: 90, "every document") {
            (f.finishedCount >= inputs.count + 1 && f.allJobFolders.isEmpty && f.leftInDrop.isEmpty) || !service.isRunning
        }
        let all = RLInputs(names: inputs.names + ["slow.pdf"], titles: inputs.titles + ["slow"])
        rlAssertEachDocumentDoneOnce(f, all)
        let exports = files(in: f.out)
        let titles = exports.map { name -> String in
            var stem = String(name.dropLast(4))
            if stem.hasPrefix("new ") { stem.removeFirst(4) }
            return stem
        }
        let twice = Dictionary(grouping: titles) { $0 }.filter { $0.value.count > 1 }.keys.sorted()
        XCTAssertEqual(twice, [], "exported more than once across the reload: \(exports.filter { name in twice.contains { name.contains($0) } }.prefix(12))")
        XCTAssertEqual(exports.filter(rlIsNumberedCopy), [], "no document exported twice")
        XCTAssertEqual(Set(titles), Set(all.titles))
        XCTAssertTrue(exports.contains { $0.hasPrefix("new ") }, "later documents use the new name")
        // Jobs running at the reload belong to this very process: the
        // re-opened folder must not "resume" them a second time (two runs of
        // one job: the loser retries for ever on a job folder that is gone).
        rlHolds(for: 1, "no job is run twice across the reload") { !service.log.contains(" waits: ") }
        let resumed = service.log.split(separator: "\n").filter { $0.contains("resuming ") }
        XCTAssertEqual(resumed.count, 0, "jobs of the running process resumed as if left by an earlier run:\n\(resumed.prefix(5).joined(separator: "\n"))")
        let ghosts = service.log.split(separator: "\n").filter { $0.contains(" waits: ") }
        XCTAssertEqual(ghosts.count, 0, "ghost jobs retrying:\n\(ghosts.prefix(5).joined(separator: "\n"))")
        XCTAssertEqual(service.terminate().exit, .exited(0))
    }
}

// MARK: - helpers of these tests

/// N small PDFs named `<prefix>-0001.pdf`… with the unique title `<PREFIX> 0001`…
struct RLInputs {
    let count: Int
    let names: [String]
    let titles: [String]

    init(count: Int, prefix: String) {
        self.count = count
        names = (1...count).map { String(format: "%@-%04d.pdf", prefix, $0) }
        titles = (1...count).map { String(format: "%@ %04d", prefix.uppercased(), $0) }
    }

    init(names: [String], titles: [String]) {
        count = names.count
        self.names = names
        self.titles = titles
    }

    func bytes(_ i: Int) -> [UInt8] { rlPDF(title: titles[i]) }

    /// Index ranges of `n` waves.
    func waves(_ n: Int) -> [Range<Int>] {
        let size = (count + n - 1) / n
        return stride(from: 0, to: count, by: size).map { $0..<min($0 + size, count) }
    }
}

extension RLFolders {
    /// Documents that ended: in done/, or in failed/ WITH their error file
    /// (written just after the original is moved there).
    var finishedCount: Int { doneNames.count + errorFiles.count }
}

extension RLService {
    /// Waits up to `grace` for every process of the last run's group to end;
    /// returns (and kills) those that did not.
    func lingering(grace: Double) -> [pid_t] {
        guard let group = pid else { return [] }
        let deadline = Date().addingTimeInterval(grace)
        while !RLProcess.liveMembers(ofGroup: group).isEmpty && Date() < deadline { usleep(10_000) }
        let survivors = RLProcess.liveMembers(ofGroup: group)
        for survivor in survivors { kill(survivor, SIGKILL) }
        return survivors
    }
}

/// Drops `inputs` in waves while SIGKILLing and restarting `service`
/// `kills` times at random moments, then lets the last run finish.
func rlChaos(_ service: RLService, _ f: RLFolders, _ inputs: RLInputs, kills: Int, rng: inout RLRandom, timeout: Double = 120,
             diagnostics: () -> String = { "" }, file: StaticString = #filePath, line: UInt = #line) throws {
    let waves = inputs.waves(kills - 2)
    var next = 0
    var dropped = 0
    var moments: [String] = []
    try service.start()
    for _ in 0..<kills {
        if next < waves.count {
            for i in waves[next] { f.drop(inputs.names[i], inputs.bytes(i)) }
            dropped += waves[next].count
            next += 1
        }
        if Int.random(in: 0..<4, using: &rng) == 0 {
            // Right after the start: while the service opens its folders and resumes journaled jobs.
            let delay = UInt32.random(in: 0...150_000, using: &rng)
            usleep(delay)
            moments.append("start+\(delay / 1000)ms")
        } else {
            // While documents flow: after a random number of further documents, at a random phase.
            let target = min(dropped, f.finishedCount + Int.random(in: 1...40, using: &rng))
            let deadline = Date().addingTimeInterval(30)
            while f.finishedCount < target && Date() < deadline && service.isRunning { usleep(2_000) }
            usleep(UInt32.random(in: 0...30_000, using: &rng))
            moments.append("at \(f.finishedCount)")
        }
        guard service.isRunning else {
            XCTFail("the service died by itself (\(service.process?.exit?.description ?? "?")):\n\(service.currentLog.suffix(4000))", file: file, line: line)
            return
        }
        service.kill9()
        try service.start()
    }
    while next < waves.count {
        for i in waves[next] { f.drop(inputs.names[i], inputs.bytes(i)) }
        next += 1
    }
    print("[chaos] kills: \(moments.joined(separator: ", ")); resumed jobs: \(service.count("resuming "))")
    waitUntil(timeout: timeout, "every document to end in done/ or failed/", file: file, line: line) {
        (f.finishedCount >= inputs.count && f.allJobFolders.isEmpty && f.leftInDrop.isEmpty) || !service.isRunning
    }
    if f.finishedCount < inputs.count || !f.allJobFolders.isEmpty {
        let stuck = f.allJobFolders.prefix(5).map { job -> String in
            let instance = job.split(separator: "/").first.map(String.init) ?? ""
            let id = job.split(separator: "/").last.map(String.init) ?? ""
            return "\(job): files \(allEntries(in: f.jobs(instance: instance)).filter { $0.hasPrefix(id) }); journal: " + f.journal(of: id, instance: instance)
        }
        XCTFail("""
            \(f.finishedCount) of \(inputs.count) finished; left in the drop folder: \(f.leftInDrop.prefix(10)); \
            job folders: \(f.allJobFolders.count)
            \(stuck.joined(separator: "\n"))
            \(diagnostics())
            log tail:
            \(service.currentLog.suffix(3000))
            """, file: file, line: line)
    }
    // Everything may have been done before the last restart: SIGTERM only once
    // the run has installed its signal handlers (it has when it watches).
    service.waitUntilWatching(file: file, line: line)
    let (exit, _) = service.terminate()
    XCTAssertEqual(exit, .exited(0), "the last run stops cleanly", file: file, line: line)
}

/// Every input is in done/ exactly once (no "name (2).pdf"), nothing failed,
/// nothing left in the drop folder or in any job folder.
func rlAssertEachDocumentDoneOnce(_ f: RLFolders, _ inputs: RLInputs, file: StaticString = #filePath, line: UInt = #line) {
    let done = f.doneNames
    XCTAssertEqual(done.filter(rlIsNumberedCopy), [], "a document reached done/ twice", file: file, line: line)
    XCTAssertEqual(Set(done), Set(inputs.names), "missing in done/: \(Set(inputs.names).subtracting(done).sorted().prefix(20))", file: file, line: line)
    XCTAssertEqual(done.count, inputs.count, file: file, line: line)
    XCTAssertEqual(f.failedNames, [], "valid documents failed:\n\(f.errorReport())", file: file, line: line)
    XCTAssertEqual(f.leftInDrop, [], "left in the drop folder", file: file, line: line)
    // Eventually: a running service that sees a file twice (two instances, or
    // a re-opened folder) makes a job folder for its second claim and removes
    // it at once when the rename finds the file gone.
    waitUntil(timeout: 10, "no job folder left: \(f.allJobFolders.prefix(5))", file: file, line: line) { f.allJobFolders.isEmpty }
}
