import Foundation
import Glibc
import Synchronization

public struct ServiceError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The engine: watches every configured drop folder and runs each document that
/// lands through the pipeline to its destinations. A host embeds it (seed 004):
/// `start()`, then `stop()`; the `hotfolder` executable is one such host.
public final class HotFolderService: @unchecked Sendable {
    private let current: Mutex<ServiceConfiguration>
    /// The configuration in force (replaced by `reload`).
    public var configuration: ServiceConfiguration { current.withLock { $0 } }
    let log: Logger
    weak var delegate: (any HotFolderDelegate)?
    let pool: WorkerPool
    private let runtimes = Mutex<[String: FolderRuntime]>([:])
    private let stopped = DispatchSemaphore(value: 0)
    let tracker = PrintTracker()
    /// Jobs this process owns (claimed or resumed, not yet finished): recovery
    /// after a reload must not take them for leftovers of an earlier run.
    private let activeJobs = Mutex<Set<String>>([])
    /// One-shot callers waiting for a job that parked (a print being followed).
    private let outcomeWaiters = Mutex<[String: @Sendable (JobOutcome) -> Void]>([:])
    private let timers = DispatchQueue(label: "hotfolder.timers")
    private let state = Mutex(State())

    private struct State {
        var stopping = false
    }



    let generator: Generator
    /// Group commit of the syncs that exactly-once needs.
    let durability: SyncBatcher

    /// - Parameter workerExecutable: the `hotfolder` binary, started as
    ///   `hotfolder worker` for isolated generation; nil generates in this process.
    public init(configuration: ServiceConfiguration, delegate: (any HotFolderDelegate)? = nil,
                logToStandardError: Bool = true, workerExecutable: String? = nil) {
        self.current = Mutex(configuration)
        self.delegate = delegate
        self.log = Logger(level: configuration.logLevel, delegate: delegate, toStandardError: logToStandardError)
        // Twice as many job threads as generators: while some wait for a sync
        // or a rename, the others generate.
        let pool = WorkerPool(size: configuration.workers * 2)
        self.pool = pool
        // Jobs on the job threads will ask for a sync in a moment: the next one waits for them.
        self.durability = SyncBatcher(othersWorking: { pool.working > 0 })
        if configuration.generation == .workers, let workerExecutable {
            generator = Generator(mode: .workers(executable: workerExecutable, timeout: configuration.jobTimeout, memoryLimit: configuration.jobMemory), concurrency: configuration.workers)
        } else {
            generator = Generator(mode: .inProcess, concurrency: configuration.workers)
        }
    }

    // MARK: - lifecycle

    /// Opens every folder, resumes the jobs an earlier run left, and starts
    /// watching. Returns at once; work happens on the service's threads.
    public func start() {
        for folder in configuration.folders {
            startFolder(folder)
        }
    }

    /// Runs until `stop()` has finished.
    public func run() {
        start()
        stopped.wait()
    }

    /// Logs a message of the host's through the service's log.
    public func note(_ level: LogLevel, _ message: String) { log.log(level, message) }

    /// Applies a new configuration: folders that changed are re-opened, the
    /// others keep running untouched. Jobs in progress finish with the settings
    /// they started with. (`workers`, `generation` and the job limits need a restart.)
    public func reload(_ new: ServiceConfiguration) {
        let old = current.withLock { c -> ServiceConfiguration in
            defer { c = new }
            return c
        }
        let serviceChanged = old.cupsServer != new.cupsServer || old.instance != new.instance
        var restarted: [String] = []
        var replaced: [FolderRuntime] = []
        for folder in old.folders {
            let replacement = new.folder(named: folder.name)
            guard serviceChanged || replacement != folder else { continue }
            if let runtime = runtimes.withLock({ $0.removeValue(forKey: folder.name) }) {
                runtime.stopWatching()
                runtime.releaseLock()
                replaced.append(runtime)
            }
            if replacement == nil { log.log(.info, "no longer watched (removed from the configuration)", folder: folder.name) }
        }
        for folder in new.folders where serviceChanged || old.folder(named: folder.name) != folder {
            startFolder(folder)
            restarted.append(folder.name)
        }
        // Documents parked on the old settings (a policy, a printer) try again under the new ones.
        for runtime in replaced {
            for feature in runtime.features.values { feature.releaseWaiting() }
        }
        if old.workers != new.workers || old.generation != new.generation || old.jobTimeout != new.jobTimeout || old.jobMemory != new.jobMemory {
            log.log(.warning, "workers, generation, job-timeout and job-memory take effect at the next start")
        }
        log.log(.info, "configuration reloaded from \(new.file); \(restarted.isEmpty ? "no folder changed" : "re-opened: " + restarted.joined(separator: ", "))")
    }

    /// Stops taking new files, lets running jobs finish within
    /// `shutdown-timeout`, and returns; whatever is unfinished stays journaled
    /// and resumes at the next start. Documents not yet claimed stay where they are.
    public func stop() {
        let already = state.withLock { s -> Bool in
            defer { s.stopping = true }
            return s.stopping
        }
        guard !already else { return }
        let runtimes = self.runtimes.withLock { Array($0.values) }
        for runtime in runtimes {
            runtime.stopWatching()
        }
        tracker.stopAll()
        pool.shutdown(discardQueued: true)
        let timeout = configuration.shutdownTimeout
        if !waitUntilDrained(timeout: timeout) {
            log.log(.warning, "\(pendingJobs) job(s) still running after shutdown-timeout (\(Self.format(timeout))); they resume at the next start")
            // A worker must not go on writing into a job the next start redoes.
            generator.killBusyWorkers()
        }
        generator.shutdown()
        for runtime in runtimes {
            // What the journal holds back in memory (steps that need no sync)
            // is written, so the next start does not look at finished jobs again.
            try? runtime.area.journal.flush(sync: false)
            runtime.area.retire()
            runtime.releaseLock()
        }
        log.log(.info, "stopped")
        stopped.signal()
    }

    var isStopping: Bool { state.withLock { $0.stopping } }

    /// Waits until no job runs on a job thread or waits for a sync (a job
    /// goes back and forth between the two); false when `timeout` passed first.
    private func waitUntilDrained(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while pool.pending > 0 || !durability.isIdle {
            if Date() >= deadline { return false }
            usleep(10_000)
        }
        return true
    }

    /// Jobs queued or running (for tests and status).
    /// (Jobs that wait for a sync off the job threads count too.)
    public var pendingJobs: Int { pool.pending }

    /// Documents of a folder that wait for their job ticket.
    public func waitingForTickets(_ folder: String) -> Int {
        runtimes.withLock { $0[folder] }?.tickets.waitingDocuments.count ?? 0
    }

    private func startFolder(_ folder: FolderConfiguration) {
        let name = folder.name
        let tickets = TicketDesk(policy: folder.tickets, wait: folder.ticketWait, label: name) { [weak self] decision in
            self?.ticketDecision(decision, folder: name)
        }
        let settler = Settler(
            settle: folder.settle, label: name,
            onReady: { [weak tickets] candidate in tickets?.settled(candidate) },
            onEvent: { [weak self] event in self?.watchEvent(event, folder: name) },
            onProblem: { [weak self] message in self?.log.log(.error, message, folder: name) })
        let runtime: FolderRuntime
        do {
            runtime = try FolderRuntime(config: folder, settler: settler, tickets: tickets, service: configuration)
        } catch {
            log.log(.error, "cannot open the drop folder: \(error); retrying every 5 s until it is there", folder: name)
            retryLater(folder)
            return
        }
        runtimes.withLock { $0[name] = runtime }
        let board = runtime.status
        tickets.reportWaiting { document, reason in
            board.setWaiting(job: "ticket:" + document.path, document: document.name, reason: reason)
        }
        observeFeatures(runtime)
        recover(runtime)
        let rules = IgnoreRules(ignore: folder.ignore, include: folder.include)
        var how: String
        let remote = Poller.remoteFileSystem(at: folder.path)
        if folder.watch == .poll || (folder.watch == .auto && remote != nil) {
            startPolling(runtime)
            how = "polling every \(Self.format(folder.pollInterval))" + (remote.map { " (on \($0), where inotify misses remote writes)" } ?? "")
        } else {
            let token = InotifyHub.shared.add(.init(
                root: folder.path, recursive: folder.recursive, excluded: runtime.excluded, rules: rules, sink: settler))
            runtime.hubToken.withLock { $0 = token }
            // inotify may have refused the folder already, before the token was here to remove.
            if runtime.poller.withLock({ $0 }) != nil { runtime.stopInotify() }
            how = "inotify"
        }
        if folder.rescan > 0 {
            // What inotify missed (a queue overflow on another mount, a bug)
            // and what the service had to leave (a claim that failed, in either
            // mode) is found again.
            let timer = DispatchSource.makeTimerSource(queue: timers)
            timer.schedule(deadline: .now() + folder.rescan, repeating: folder.rescan, leeway: .seconds(1))
            timer.setEventHandler { [weak self, weak runtime] in
                guard let self, let runtime else { return }
                self.rescan(runtime)
            }
            timer.resume()
            runtime.rescanTimer = timer
            how += ", rescan every \(Self.format(folder.rescan))"
        }
        how += ", settle \(Self.format(folder.settle))"
        if folder.recursive { how += ", with subfolders" }
        let targets = folder.destinations.map { d in
            d.destination == .export ? "export to \(d.exportFolder)" : "print on \(d.printer ?? "the default printer")"
        }
        log.log(.info, "watching \(folder.path) (\(how)); \(targets.joined(separator: ", "))", folder: name)
    }

    /// Lists the folder again now, as its safety rescan does: files there
    /// that were missed or left (a claim that failed) are taken.
    public func rescan(folder: String) {
        guard let runtime = runtimes.withLock({ $0[folder] }) else { return }
        rescan(runtime)
    }

    private func rescan(_ runtime: FolderRuntime) {
        // A document whose claim failed and that is gone since (removed by
        // hand) no longer waits.
        let gone = runtime.claimFailures.withLock { failures -> [String] in
            let gone = failures.filter { access($0, F_OK) != 0 }
            failures.subtract(gone)
            return Array(gone)
        }
        for path in gone { runtime.status.setWaiting(job: "claim:" + path, document: "", reason: nil) }
        if let token = runtime.hubToken.withLock({ $0 }) {
            if runtime.isStale {
                watchEvent(.folderGone(path: runtime.config.path), folder: runtime.config.name)
            } else {
                InotifyHub.shared.rescan(token)
            }
        }
        runtime.poller.withLock { $0 }?.announceAgain()
    }

    /// Watches the folder by polling: as configured, or instead of inotify
    /// when inotify cannot watch it (once; false when it already polls).
    @discardableResult
    private func startPolling(_ runtime: FolderRuntime) -> Bool {
        let folder = runtime.config
        let poller = Poller(root: folder.path, recursive: folder.recursive, excluded: runtime.excluded,
                            rules: IgnoreRules(ignore: folder.ignore, include: folder.include),
                            interval: folder.pollInterval, sink: runtime.settler)
        let started = runtime.poller.withLock { current -> Bool in
            guard current == nil else { return false }
            current = poller
            return true
        }
        guard started else { return false }
        runtime.stopInotify()
        poller.start()
        return true
    }

    /// Starts the folder again in 5 s, unless the service stopped or a reload
    /// changed or removed it meanwhile.
    private func retryLater(_ folder: FolderConfiguration) {
        timers.asyncAfter(deadline: .now() + 5) { [weak self] in
            guard let self, !self.isStopping, self.configuration.folder(named: folder.name) == folder,
                  self.runtimes.withLock({ $0[folder.name] }) == nil else { return }
            self.startFolder(folder)
        }
    }

    private func watchEvent(_ event: WatchEvent, folder: String) {
        switch event {
        case .folderGone(let path):
            log.log(.warning, "the drop folder \(path) is gone; waiting for it to come back (nothing is failed for it)", folder: folder)
            guard let runtime = runtimes.withLock({ $0.removeValue(forKey: folder) }) else { return }
            runtime.stopWatching()
            runtime.releaseLock()
            retryLater(runtime.config)
        case .overflow:
            log.log(.warning, "inotify queue overflowed; rescanning the folder", folder: folder)
        case .cannotWatch(let path, let reason):
            guard !isStopping, let runtime = runtimes.withLock({ $0[folder] }), !runtime.isStale, startPolling(runtime) else { return }
            log.log(.error, "cannot watch \(path): \(reason); polling the folder every \(Self.format(runtime.config.pollInterval)) instead", folder: folder)
        default:
            break
        }
    }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(Int(seconds * 1000)) ms"
    }

    // MARK: - jobs

    /// Documents beyond this many waiting for a job thread stay in their folder
    /// (unclaimed) and are picked up by a rescan once the queue has drained, so
    /// memory stays bounded however many files land at once.
    public var maxQueuedDocuments = 10_000
    private let deferredFolders = Mutex<Set<String>>([])
    /// Documents queued for a job thread and not yet claimed (folder, NUL, path).
    private let queued = Mutex<Set<String>>([])

    private func ticketDecision(_ decision: TicketDesk.Decision, folder: String) {
        switch decision {
        case .process(let document):
            enqueue(document, folder: folder)
        case .missingTicket(let document):
            enqueue(document, folder: folder, missingTicket: true)
        case .orphan(let ticket):
            pool.submit { [weak self] in
                guard let self, let runtime = self.runtimes.withLock({ $0[folder] }) else { return }
                self.failOrphan(ticket, runtime)
            }
        }
    }

    private func enqueue(_ candidate: Candidate, folder: String, missingTicket: Bool = false) {
        guard !isStopping else { return }
        if pendingJobs >= maxQueuedDocuments {
            let first = deferredFolders.withLock { $0.insert(folder).inserted }
            if first {
                log.log(.info, "more than \(maxQueuedDocuments) documents wait; the rest stay in the folder until the queue drains", folder: folder)
            }
            return
        }
        // A rescan (on the timer, after an overflow) finds again the files
        // that wait here: each is queued once. A second entry would claim
        // whatever has that name by its turn: a new file still being written.
        let key = folder + "\u{0}" + candidate.path
        guard queued.withLock({ $0.insert(key).inserted }) else { return }
        let accepted = pool.submit { [weak self] in
            guard let self else { return }
            // Queued until its claim is tried (a rescan meanwhile adds nothing).
            let tried: @Sendable () -> Void = { [weak self] in self?.queued.withLock { _ = $0.remove(key) } }
            guard let runtime = self.runtimes.withLock({ $0[folder] }) else { return tried() }
            self.claimAndRun(candidate, runtime, missingTicket: missingTicket, tried: tried)
            self.rescanDeferredIfDrained()
        }
        if !accepted { queued.withLock { _ = $0.remove(key) } }
    }

    private func rescanDeferredIfDrained() {
        guard pendingJobs <= maxQueuedDocuments / 2 else { return }
        let folders = deferredFolders.withLock { d -> Set<String> in
            defer { d.removeAll() }
            return d
        }
        for name in folders { rescan(folder: name) }
    }

    /// `tried` is called once the claim has been tried, whatever came of it.
    private func claimAndRun(_ candidate: Candidate, _ runtime: FolderRuntime, missingTicket: Bool, tried: () -> Void) {
        let folder = runtime.config
        let relative = candidate.directory == folder.path ? "" : String(candidate.directory.dropFirst(folder.path.count + 1))
        let source: Directory
        do {
            source = try runtime.drop.descend(relative)
        } catch {
            tried()
            log.log(.debug, "\(candidate.path) is gone before it could be claimed: \(error)", folder: folder.name)
            return
        }
        let claimed: JobFolder.ClaimResult
        // The job is this process's before its file is in jobs/: a recovery
        // that runs meanwhile (a reload) must never take it for a leftover.
        let id = JobFolder.newID()
        activeJobs.withLock { _ = $0.insert(id) }
        do {
            claimed = try JobFolder.claim(candidate.name, from: source, relativeFolder: relative, into: runtime.area, id: id)
            tried()
        } catch {
            tried()
            activeJobs.withLock { _ = $0.remove(id) }
            if runtime.isStale {
                watchEvent(.folderGone(path: folder.path), folder: folder.name)
                return
            }
            log.log(.error, "cannot claim \(candidate.path): \(error); it stays where it is and is retried by the next scan", folder: folder.name)
            // Shown by `hotfolder status` until a claim succeeds.
            runtime.claimFailures.withLock { _ = $0.insert(candidate.path) }
            runtime.status.setWaiting(job: "claim:" + candidate.path, document: relative.isEmpty ? candidate.name : relative + "/" + candidate.name,
                                      reason: "cannot be taken from the drop folder (\(error.reason)); "
                                          + (folder.rescan > 0 ? "tried again every \(Self.format(folder.rescan))" : "tried again at the next start"))
            return
        }
        if runtime.claimFailures.withLock({ !$0.isEmpty && $0.remove(candidate.path) != nil }) {
            runtime.status.setWaiting(job: "claim:" + candidate.path, document: candidate.name, reason: nil)
        }
        guard case .claimed(let job) = claimed else {
            activeJobs.withLock { _ = $0.remove(id) }
            if runtime.isStale { watchEvent(.folderGone(path: folder.path), folder: folder.name) }
            log.log(.debug, "\(candidate.path) vanished before it was claimed (taken by another instance or removed)", folder: folder.name)
            return
        }
        let hasTicket = Self.takeTicket(candidate.name, from: source, into: job)
        job.mayHaveTicket = hasTicket
        if hasTicket { runtime.tickets.taken(TicketDesk.ticketPath(of: candidate)) }
        log.log(.info, "claimed \(relative.isEmpty ? candidate.name : relative + "/" + candidate.name)\(hasTicket ? " with its ticket" : "")", folder: folder.name, job: job.id)
        runtime.status.adjustInProgress(1)
        if missingTicket && !hasTicket {
            let failure = JobFailure(.ticket, "no job ticket (\(candidate.name)\(JobTicket.suffix)) came within ticket-wait (\(Self.format(folder.ticketWait))), and this folder requires one (tickets = required)",
                                     remedy: "Drop the document again together with its ticket \(candidate.name)\(JobTicket.suffix), or set tickets = optional for this folder.")
            _ = handle(failure, job, runtime, warnings: [], attempt: 0)
            return
        }
        run(job, runtime, attempt: 0)
    }

    /// Runs a claimed job from wherever its journal says it stands.
    @discardableResult
    func run(_ job: JobFolder, _ runtime: FolderRuntime, attempt: Int) -> JobOutcome? {
        let folder = runtime.config
        // Names and titles use the time the document was claimed, so a resumed
        // job gets the same {date} and {time}.
        let claimedAt = Date(timeIntervalSince1970: job.journal.last(.claimed)?.time ?? Date().timeIntervalSince1970)
        var result: PipelineResult
        var number = job.journal.last(.generated)?.number
        if let generated = job.journal.last(.generated)?.result,
           generated.outputs.allSatisfy({ output in output.files.allSatisfy { staged in
               job.journal.last(.exported, destination: output.destination, item: staged.file) != nil
                   || job.journal.last(.exporting, destination: output.destination, item: staged.file) != nil || job.exists(staged.file) } }) {
            result = generated
            // A reload that put {n} in a name while the job waited: it gets a
            // number now, unless a delivery already began with the old name.
            if number == nil, Self.usesCounter(folder), !result.outputs.contains(where: { Self.started($0.destination, job.journal) }) {
                number = runtime.nextNumber()
                do { try Self.journalGenerated(result, number: number, job, folder) } catch {
                    return handle(error, job, runtime, warnings: result.warnings, attempt: attempt)
                }
            }
        } else {
            // Leftovers of an interrupted generation are redone from the original.
            // (A job just claimed has none: no need to look.)
            if job.mayHaveLeftovers { job.removeOutputs() }
            job.mayHaveLeftovers = true
            // A number is taken (and the counter file written) only where a
            // name or title shows it.
            let assigned = number ?? (Self.usesCounter(folder) ? runtime.nextNumber() : nil)
            number = assigned
            do {
                result = try generator.generate(folder: folder, job: job, now: claimedAt, number: assigned)
            } catch {
                return handle(error, job, runtime, warnings: [], attempt: attempt)
            }
            do { try Self.journalGenerated(result, number: number, job, folder) } catch {
                return handle(error, job, runtime, warnings: result.warnings, attempt: attempt)
            }
            for warning in result.warnings { log.log(.warning, warning, folder: folder.name, job: job.id) }
            for note in result.notes { log.log(.info, note, folder: folder.name, job: job.id) }
        }
        let values = Pipeline(folder: folder, job: job, now: claimedAt, number: number).templateValues(result.facts)
        var delivered: [String] = []
        var exportFolders: [Directory] = []
        for output in result.outputs {
            guard let sharing = folder.destinations.first(where: { $0.destination == output.destination }) else { continue }
            // The print destination asks the printer itself, right before submitting.
            if !Self.started(output.destination, job.journal), let feature = runtime.features[output.destination],
               let (source, why) = feature.check(excluding: runtime.printer) {
                park(job, runtime, on: source, why)
                return nil
            }
            do throws(JobFailure) {
                switch output.destination {
                case .export:
                    let exportFolder: Directory
                    do { exportFolder = try runtime.outputFolder(sharing.exportFolder) } catch {
                        throw JobFailure(.export, "cannot open the export folder: \(error)", remedy: "Create \(sharing.exportFolder) or make it writable for the service; the document waits and is retried.", transient: true)
                    }
                    guard case .delivered(let names, let now) = try ExportDestination(sharing: sharing, folder: exportFolder).deliver(output, job: job, values: values) else {
                        awaitExportSync(job, runtime, [job.directory, exportFolder], warnings: result.warnings, attempt: attempt)
                        return nil
                    }
                    delivered += names.map { exportFolder.child($0) }
                    exportFolders.append(exportFolder)
                    runtime.status.setDestination(.export, available: true)
                    if now {
                        let what = names.count == 1 ? names[0] : "\(names[0]) and \(names.count - 1) more"
                        log.log(.info, "exported \(what) (\(output.format.rawValue), pages \(output.pages), annotations \(output.annotations.rawValue))", folder: folder.name, job: job.id)
                    }
                case .print:
                    guard let printer = runtime.printer else { continue }
                    let destination = PrintDestination(sharing: sharing, availability: printer, tracker: tracker)
                    let delivery = try destination.deliver(
                        output, job: job, values: values,
                        resume: { [weak self] in
                            guard let self else { return }
                            self.pool.submit { self.run(job, runtime, attempt: 0) }
                        },
                        waiting: { [weak self] why in self?.noteWaiting(job, runtime, why) })
                    switch delivery {
                    case .printed(let what):
                        delivered.append(what)
                        log.log(.info, "printed as CUPS job \(what) (pages \(output.pages), annotations \(output.annotations.rawValue))", folder: folder.name, job: job.id)
                    case .parked:
                        return nil
                    }
                }
            } catch {
                return handle(error, job, runtime, warnings: result.warnings, attempt: attempt)
            }
        }
        guard !exportFolders.isEmpty else {
            return complete(job, runtime, delivered: delivered, warnings: result.warnings, attempt: attempt)
        }
        // The exports' final names are durable before the original leaves the
        // job: a crash must not find the job finished and an export missing.
        // That sync is shared with other documents, and this thread does not
        // wait for it: the sync's thread finishes the job once it is done.
        let (outputs, warnings) = (delivered, result.warnings)
        handOffUntilSynced(job, runtime, exportFolders, warnings: warnings, attempt: attempt,
                           failing: "cannot make the export durable",
                           remedy: "Check the export folder's file system; the job is retried and nothing is delivered twice.") { [weak self] in
            guard let self else { return }
            // On a job thread, so that the next sync starts at once.
            let finish: @Sendable () -> Void = {
                _ = self.complete(job, runtime, delivered: outputs, warnings: warnings, attempt: attempt)
            }
            if !self.pool.resume(finish) { finish() }
        }
        return nil
    }

    /// The job leaves this thread until a sync of `folders` and of its journal
    /// (shared with other documents) is done; `then` runs on the sync's
    /// thread afterwards. A failed sync is a transient export failure.
    private func handOffUntilSynced(_ job: JobFolder, _ runtime: FolderRuntime, _ folders: [Directory], warnings: [String], attempt: Int,
                                    failing reason: String, remedy: String, then: @escaping @Sendable () -> Void) {
        // Still pending (and counted against maxQueuedDocuments) while it waits.
        pool.handOff()
        durability.afterSync(folders, preparing: job.journal.file.map { [$0] } ?? []) { [weak self] failure in
            guard let self else { return }
            if let failure {
                self.pool.release()
                _ = self.handle(JobFailure(.export, "\(reason): \(failure)", remedy: remedy, transient: true),
                                job, runtime, warnings: warnings, attempt: attempt)
                return
            }
            then()
        }
    }

    /// Journals what generation made (and the job's number). Not synced: a
    /// lost record means generating again, which is harmless.
    private static func journalGenerated(_ result: PipelineResult, number: Int?, _ job: JobFolder, _ folder: FolderConfiguration) throws(JobFailure) {
        var record = JournalRecord(.generated)
        record.result = result
        record.number = number
        do { try job.journal.append(record, sync: false) } catch {
            throw JobFailure(.generate, "cannot write the job journal: \(error)", remedy: "Check free space in \(folder.serviceArea).", transient: true)
        }
    }

    /// The export's files wait for a sync before their final names (in the
    /// job, or under temporary names in the export folder); the job goes on
    /// (placing them) once it is done, on a job thread, before documents not
    /// yet claimed. This thread does not wait: it takes the next document
    /// meanwhile.
    private func awaitExportSync(_ job: JobFolder, _ runtime: FolderRuntime, _ folders: [Directory], warnings: [String], attempt: Int) {
        let staged = job.exportsStaged
        handOffUntilSynced(job, runtime, folders, warnings: warnings, attempt: attempt,
                           failing: "cannot make the staged export durable",
                           remedy: "Check the file system of the export folder and of the drop folder; the job is retried and nothing is delivered twice.") { [weak self] in
            guard let self else { return }
            job.exportsDurable(staged)
            // While the service stops the job threads take nothing new: the
            // job is finished here (it does not wait for a sync on this thread).
            if !self.pool.resume({
                self.run(job, runtime, attempt: attempt)
                self.rescanDeferredIfDrained()
            }) {
                self.run(job, runtime, attempt: attempt)
            }
        }
    }

    /// Moves the original on and reports the job's outcome.
    private func complete(_ job: JobFolder, _ runtime: FolderRuntime, delivered: [String], warnings: [String], attempt: Int) -> JobOutcome? {
        let folder = runtime.config
        do {
            let now = try finish(job, runtime)
            let outcome = JobOutcome(folder: folder.name, job: job.id, original: job.originalName, originalNow: now, delivered: delivered, failure: nil, warnings: warnings)
            log.log(.info, "done: \(job.originalName) → \(now ?? "deleted")", folder: folder.name, job: job.id)
            report(outcome)
            return outcome
        } catch {
            return handle(error, job, runtime, warnings: warnings, attempt: attempt)
        }
    }

    private func report(_ outcome: JobOutcome) {
        activeJobs.withLock { _ = $0.remove(outcome.job) }
        // Jobs also end off the job threads (after their last sync).
        rescanDeferredIfDrained()
        if let board = runtimes.withLock({ $0[outcome.folder] })?.status {
            board.setWaiting(job: outcome.job, document: outcome.original, reason: nil)
            board.adjustInProgress(-1)
        }
        delegate?.hotFolder(finished: outcome)
        if let waiter = outcomeWaiters.withLock({ $0.removeValue(forKey: outcome.job) }) { waiter(outcome) }
    }

    /// Logs why a job waits, once per change of reason.
    private func noteWaiting(_ job: JobFolder, _ runtime: FolderRuntime, _ why: String?, level: LogLevel = .info, remedy: String? = nil) {
        let changed = runtime.status.setWaiting(job: job.id, document: job.originalName, reason: why)
        if changed, let why {
            log.log(level, "\(job.originalName) waits: \(why)" + (remedy.map { ". \($0)" } ?? ""), folder: runtime.config.name, job: job.id)
        }
    }

    /// A destination's availability is logged when it changes, not per
    /// document, and kept current on the status board.
    private func observeFeatures(_ runtime: FolderRuntime) {
        let folder = runtime.config.name
        let board = runtime.status
        for (kind, feature) in runtime.features {
            let wasUnavailable = Mutex(false)
            feature.observe { [weak self] verdict in
                let before = wasUnavailable.withLock { w -> Bool in
                    defer { w = !verdict.available }
                    return w
                }
                if verdict.available {
                    board.setDestination(kind, available: true)
                    if before { self?.log.log(.info, "\(kind.rawValue) is available again; waiting documents go now", folder: folder) }
                } else {
                    let reason = verdict.reason ?? "unavailable"
                    let source = verdict.source == "printer" && reason.hasPrefix("cupsd") ? "cupsd" : verdict.source
                    board.setDestination(kind, available: false, source: source, reason: reason)
                    self?.log.log(.warning, "\(kind == .print ? "printing" : "exporting") paused, documents wait: \(reason)", folder: folder)
                }
            }
            // The first answer, off the caller's thread: asking CUPS can take a moment.
            timers.async { _ = feature.check() }
        }
    }

    /// Parks a job on the source that says no; it runs again (with the folder's
    /// current runtime, which a reload may have replaced) once the source says yes.
    private func park(_ job: JobFolder, _ runtime: FolderRuntime, on source: any FeatureSource, _ why: String) {
        noteWaiting(job, runtime, why)
        let name = runtime.config.name
        source.waitUntilAvailable { [weak self] in
            guard let self, !self.isStopping else { return }
            let current = self.runtimes.withLock { $0[name] } ?? runtime
            self.pool.submit { self.run(job, current, attempt: 0) }
        }
    }

    /// Whether a folder's names or titles use its counter ({n}).
    static func usesCounter(_ folder: FolderConfiguration) -> Bool {
        folder.destinations.contains { $0.name.uses(.n) || $0.title?.uses(.n) == true }
    }

    /// Whether the journal shows a destination's delivery under way or done:
    /// then it is finished whatever the sources say now.
    static func started(_ destination: DestinationKind, _ journal: Journal) -> Bool {
        switch destination {
        case .export: journal.last(.exporting, destination: .export) != nil || journal.last(.exported, destination: .export) != nil
        case .print: [.printSubmitting, .printSubmitted, .printed, .printFailed].contains { journal.last($0, destination: .print) != nil }
        }
    }

    /// A transient fault parks the job and retries it with backoff; any other
    /// failure sends the original to failed/ with its reason.
    private func handle(_ failure: JobFailure, _ job: JobFolder, _ runtime: FolderRuntime, warnings: [String], attempt: Int) -> JobOutcome? {
        let folder = runtime.config
        if failure.transient && !isStopping {
            let reason = failure.description
            if failure.step == .export {
                runtime.status.setDestination(.export, available: false, source: "export folder", reason: failure.reason)
            }
            noteWaiting(job, runtime, reason, level: .warning, remedy: failure.remedy)
            let delay = min(60, 0.5 * pow(2, Double(min(attempt, 8))))
            timers.asyncAfter(deadline: .now() + delay) { [weak self] in
                guard let self, !self.isStopping else { return }
                self.pool.submit { self.run(job, runtime, attempt: attempt + 1) }
            }
            return nil
        }
        if failure.transient { return nil } // stopping: stays journaled for the next start
        log.log(.error, "failed: \(job.originalName): \(failure.description). \(failure.remedy)", folder: folder.name, job: job.id)
        let now = moveToFailed(job, runtime, failure: failure, warnings: warnings)
        let outcome = JobOutcome(folder: folder.name, job: job.id, original: job.originalName, originalNow: now, delivered: [], failure: failure, warnings: warnings)
        report(outcome)
        return outcome
    }

    /// Moves the original to done/ (or deletes it) and removes the job's files.
    private func finish(_ job: JobFolder, _ runtime: FolderRuntime) throws(JobFailure) -> String? {
        let folder = runtime.config
        var record = JournalRecord(.finished)
        var now: String?
        var ticketLeft = false
        do {
            if folder.afterSuccess == .delete {
                try job.directory.remove(job.originalFile)
                ticketLeft = true
                try job.journal.append(record, sync: false)
            } else {
                let done = try runtime.outputFolder(folder.doneFolder)
                // No sync needed: if the move is lost in a crash, the original is back
                // in the job and the journal (export recorded) finishes it again.
                let name = try Self.moveNumbered(job.originalFile, as: job.originalName, from: job.directory, to: done)
                record.name = name
                now = done.child(name)
                try job.journal.append(record, sync: false)
                ticketLeft = job.mayHaveTicket && !Self.moveTicket(of: job, beside: name, in: done)
            }
        } catch {
            throw JobFailure(.finish, "the document was delivered, but the original cannot be moved to \(folder.doneFolder): \(error)",
                             remedy: "Make the done folder writable for the service; the move is retried and nothing is delivered twice.", transient: true)
        }
        job.removeFiles(ticket: ticketLeft)
        job.journal.close()
        return now
    }

    private func moveToFailed(_ job: JobFolder, _ runtime: FolderRuntime, failure: JobFailure, warnings: [String]) -> String? {
        let folder = runtime.config
        var record = JournalRecord(.failing)
        record.failure = failure
        do {
            let failed = try runtime.outputFolder(folder.failedFolder)
            // The reason is written beside the original in the job first, so a
            // crash between the two moves cannot leave an original without it.
            try Self.writeErrorFile(named: job.name(Self.pendingErrorFile), in: job.directory,
                                    text: ErrorReport.text(original: job.originalName, folder: folder, job: job.id, failure: failure, warnings: warnings))
            try job.journal.append(record)
            let name = try Self.moveNumbered(job.originalFile, as: job.originalName, from: job.directory, to: failed)
            record.name = name
            try? job.journal.append(record, sync: false)
            try job.directory.relocate(job.name(Self.pendingErrorFile), to: failed, as: Self.errorFileName(for: name), mode: .replace)
            let ticketLeft = !Self.moveTicket(of: job, beside: name, in: failed)
            try failed.sync()
            // A generation cut short (a worker that crashed) leaves staged files no record names.
            if job.mayHaveLeftovers { job.removeOutputs() }
            job.removeFiles(ticket: ticketLeft)
            job.journal.close()
            return failed.child(name)
        } catch {
            log.log(.error, "cannot move \(job.originalName) to \(folder.failedFolder): \(error); it stays safe in \(job.directory.child(job.originalFile)) and is retried at the next start", folder: folder.name, job: job.id)
            return nil
        }
    }

    /// `<name>.error.txt`, with the name shortened where that would pass the
    /// 255-byte limit of a file name.
    static func errorFileName(for name: String) -> String {
        let suffix = ".error.txt"
        return FileNameSanitizer.fitting(name, limit: 255 - suffix.utf8.count) + suffix
    }

    /// The error file while it still waits in the job folder.
    static let pendingErrorFile = ".error.txt"

    static func writeErrorFile(for name: String, in folder: Directory, text: String) throws(SystemError) {
        try writeErrorFile(named: errorFileName(for: name), in: folder, text: text)
    }

    static func writeErrorFile(named target: String, in folder: Directory, text: String) throws(SystemError) {
        let temporary = ".hf-error-\(UInt64.random(in: 0...UInt64.max)).tmp"
        try? folder.remove(temporary)
        let file = try folder.createFile(temporary)
        try file.write(Array(text.utf8))
        try file.sync()
        try folder.move(temporary, to: folder, as: target, mode: .replace)
    }

    /// Moves `name` into `target`, as `name (2)` etc. when taken (shortened
    /// where the number would pass 255 bytes); never overwrites.
    static func moveNumbered(_ name: String, from source: Directory, to target: Directory) throws(SystemError) -> String {
        try moveNumbered(name, as: name, from: source, to: target)
    }

    /// Moves `file` from `source` into `target` as `name`, numbered like above.
    /// On another file system `file` is copied once (Directory.copyAcross),
    /// and the copy takes the first free name.
    static func moveNumbered(_ file: String, as name: String, from source: Directory, to target: Directory) throws(SystemError) -> String {
        var n = 1
        var copy: String?
        while true {
            let limit = 255
            let candidate = n == 1 ? FileNameSanitizer.fitting(name, limit: limit)
                : FileNameSanitizer.numbered(FileNameSanitizer.fitting(name, limit: limit - " (\(n))".utf8.count), n)
            do {
                if let copy {
                    try target.move(copy, to: target, as: candidate, mode: .noReplace)
                    source.finishMoveAcross(file, to: target)
                } else {
                    try source.move(file, to: target, as: candidate, mode: .noReplace)
                }
                return candidate
            } catch {
                if error.errno == EXDEV && copy == nil {
                    copy = try source.copyAcross(file, to: target)
                    continue
                }
                guard error.errno == EEXIST, n < 100_000 else {
                    if let copy { try? target.remove(copy) }
                    throw error
                }
                n += 1
            }
        }
    }

    // MARK: - tickets

    /// Moves `<name>.ticket` from the drop folder into the job; true when it came.
    static func takeTicket(_ name: String, from source: Directory, into job: JobFolder) -> Bool {
        let ticket = name + JobTicket.suffix
        // Looked for first: most documents come without one, and a rename
        // between two folders, even one that fails, takes the file system's
        // rename lock that every claim and delivery needs too.
        guard source.exists(ticket) else { return false }
        do {
            try source.move(ticket, to: job.directory, as: job.name(Pipeline.ticketFile), mode: .noReplace)
            return true
        } catch {
            return error.errno != ENOENT && job.exists(Pipeline.ticketFile)
        }
    }

    /// Moves a job's ticket to `<name>.ticket` beside its document; false
    /// when a ticket is still in the job (it could not be moved).
    @discardableResult
    static func moveTicket(of job: JobFolder, beside name: String, in target: Directory) -> Bool {
        moveTicket(job.name(Pipeline.ticketFile), from: job.directory, beside: name, in: target)
    }

    @discardableResult
    static func moveTicket(_ file: String, from directory: Directory, beside name: String, in target: Directory) -> Bool {
        let limit = 255 - JobTicket.suffix.utf8.count
        do {
            // Tried without looking first: most jobs have none.
            try directory.relocate(file, to: target, as: FileNameSanitizer.fitting(name, limit: limit) + JobTicket.suffix, mode: .replace)
            return true
        } catch {
            return error.errno == ENOENT
        }
    }

    /// A ticket no document came for goes to failed/ with its reason.
    private func failOrphan(_ ticket: Candidate, _ runtime: FolderRuntime) {
        let folder = runtime.config
        let relative = ticket.directory == folder.path ? "" : String(ticket.directory.dropFirst(folder.path.count + 1))
        let document = String(ticket.name.dropLast(JobTicket.suffix.count))
        let failure = JobFailure(.ticket, "no document named \"\(document)\" came for this ticket within ticket-wait (\(Self.format(folder.ticketWait)))",
                                 remedy: "Drop the ticket together with (or just before) its document, named exactly like the document plus .ticket.")
        do {
            let source = try runtime.drop.descend(relative)
            let failed = try runtime.outputFolder(folder.failedFolder)
            let name = try Self.moveNumbered(ticket.name, from: source, to: failed)
            try Self.writeErrorFile(for: name, in: failed, text: ErrorReport.text(original: name, folder: folder, job: "-", failure: failure, warnings: []))
            log.log(.error, "failed: \(ticket.name): \(failure.description). \(failure.remedy)", folder: folder.name)
            delegate?.hotFolder(finished: JobOutcome(folder: folder.name, job: "-", original: ticket.name, originalNow: failed.child(name), delivered: [], failure: failure, warnings: []))
        } catch {
            log.log(.debug, "the ticket \(ticket.path) could not be moved to failed/ (\(error)); taken meanwhile?", folder: folder.name)
        }
    }

    // MARK: - recovery

    /// Resumes every job an earlier run left in the folder's service area:
    /// each original in `jobs/` resumes at the step its records say; what is
    /// left of jobs whose original already went to done/ or failed/ follows it.
    private func recover(_ runtime: FolderRuntime) {
        let area = runtime.area
        guard var listing = try? area.list() else { return }
        if !listing.folders.isEmpty {
            for folder in listing.folders { Self.migrate(folder, in: area) }
            guard let again = try? area.list() else { return }
            listing = again
        }
        var records: [String: [JournalRecord]] = [:]
        for (job, jobRecords) in area.journal.unfinishedJobs() { records[job] = jobRecords }
        // Taken after the listing: a job of this process (a reload recovers
        // while jobs run) is in it from before its file reached jobs/ until
        // it ended, so every listed job of this process is in it, unless it
        // ended meanwhile (then its original is gone by now).
        let active = activeJobs.withLock { $0 }
        let ids = Set(listing.originals.keys).union(listing.files.keys).union(records.keys).subtracting(active).sorted()
        for id in ids {
            let files = listing.files[id] ?? []
            guard let original = listing.originals[id] else {
                finishLeftover(id, records: records[id] ?? [], files: files, runtime)
                continue
            }
            let job = JobFolder.reopen(id: id, originalFile: original, files: files, in: area, records: records[id] ?? [])
            guard job.directory.exists(original) else { continue } // ended since the listing
            if !files.contains(job.name(Pipeline.ticketFile)), let claimed = job.journal.last(.claimed),
               let source = try? runtime.drop.descend(claimed.from ?? "") {
                // Stopped between claiming the document and taking its ticket.
                _ = Self.takeTicket(job.originalName, from: source, into: job)
            }
            activeJobs.withLock { _ = $0.insert(job.id) }
            runtime.status.adjustInProgress(1)
            log.log(.info, "resuming \(job.originalName) from an earlier run (last step: \(job.journal.records.last?.event.rawValue ?? "claimed"))", folder: runtime.config.name, job: job.id)
            pool.submit { [weak self] in self?.run(job, runtime, attempt: 0) }
        }
        // Temporary files of an error report cut short.
        for (folder, name) in listing.strays where name.hasPrefix(".hf-error-") { try? folder.remove(name) }
    }

    /// A job without an original: it had finished (or never got its file).
    /// What it left goes where its document went; then it is closed.
    private func finishLeftover(_ id: String, records: [JournalRecord], files: [String], _ runtime: FolderRuntime) {
        let jobs = runtime.area.shard(for: id)
        let claimedName = records.first(where: { $0.event == .claimed })?.name
        // The original reached failed/ but its reason did not: move it there too.
        if let failing = records.last(where: { $0.event == .failing }), let name = failing.name ?? claimedName,
           let failed = try? runtime.outputFolder(runtime.config.failedFolder), !failed.exists(Self.errorFileName(for: name)) {
            if files.contains(id + Self.pendingErrorFile) {
                try? jobs.relocate(id + Self.pendingErrorFile, to: failed, as: Self.errorFileName(for: name), mode: .replace)
            } else if let failure = failing.failure {
                try? Self.writeErrorFile(for: name, in: failed, text: ErrorReport.text(original: name, folder: runtime.config, job: id, failure: failure, warnings: []))
            }
        }
        // A ticket left behind goes where its document went.
        if files.contains(id + Pipeline.ticketFile),
           let name = records.last(where: { $0.name != nil && ($0.event == .failing || $0.event == .finished) })?.name ?? claimedName {
            let failedEnd = records.contains { $0.event == .failing }
            if let target = try? runtime.outputFolder(failedEnd ? runtime.config.failedFolder : runtime.config.doneFolder) {
                Self.moveTicket(id + Pipeline.ticketFile, from: jobs, beside: name, in: target)
            }
        }
        for file in files { try? jobs.remove(file) }
        Journal(job: id, records: records, file: runtime.area.journal).close()
    }

    /// A job folder of the layout before the flat `jobs/` (`jobs/<id>/` with
    /// the original, `.journal` in JSON lines, `.ticket`, `.out-*`,
    /// `.error.txt`): its records go to the area's journal, its files into
    /// `jobs/` under their flat names, and it resumes like any other job.
    static func migrate(_ folder: String, in area: JobArea) {
        let id = folder
        guard JobFolder.parse(id + ".") == .file(id), let directory = try? area.jobs.subdirectory(folder),
              let entries = try? directory.entries() else { return }
        let oldJournal = ".journal"
        if let bytes = try? directory.openForReading(oldJournal).readAll() {
            let decoder = JSONDecoder()
            let records = bytes.split(separator: UInt8(ascii: "\n")).compactMap { try? decoder.decode(JournalRecord.self, from: Data($0)) }
            let journal = Journal(job: id, file: area.journal)
            // Synced before the files move; a crash in between migrates the
            // folder again (records twice read the same).
            for (i, record) in records.enumerated() { try? journal.append(record, sync: i == records.count - 1) }
        }
        var moved = true
        for entry in entries where entry.name != oldJournal {
            // Job-relative names (dotfiles) keep their name after the id; the original is `<id> <name>`.
            let target = entry.name.hasPrefix(".") ? id + entry.name : JobFolder.originalFile(id: id, name: entry.name)
            do { try directory.move(entry.name, to: area.shard(for: id), as: target, mode: .noReplace) } catch { moved = false }
        }
        guard moved else { return }
        try? directory.remove(oldJournal)
        try? area.jobs.removeDirectory(folder)
    }

    // MARK: - one-shot

    /// Runs the pipeline and the outcomes on one file without watching
    /// (`hotfolder process`). The file is claimed into the folder's service area
    /// like a dropped one, and ends in done/ or failed/.
    public func process(file path: String, folder name: String) throws(ServiceError) -> JobOutcome {
        guard let folder = configuration.folder(named: name) else { throw ServiceError("no folder named \(name) in \(configuration.file)") }
        let runtime: FolderRuntime
        do {
            runtime = try runtimes.withLock { $0[name] } ?? FolderRuntime(config: folder, settler: Settler(settle: 0, label: name, onReady: { _ in }),
                                                                          tickets: TicketDesk(policy: folder.tickets, wait: folder.ticketWait, label: name) { _ in }, service: configuration)
        } catch {
            throw ServiceError("cannot open the drop folder of \(name): \(error)")
        }
        runtimes.withLock { $0[name] = runtime }
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let directory = (absolute as NSString).deletingLastPathComponent
        let fileName = (absolute as NSString).lastPathComponent
        guard !fileName.hasPrefix(".") else {
            throw ServiceError("\(path): hidden files (names starting with a dot) are not documents; rename it")
        }
        // As in a watched folder, a ticket is never a document: it goes with its own.
        if fileName.hasSuffix(JobTicket.suffix), fileName.count > JobTicket.suffix.count {
            let document = String(fileName.dropLast(JobTicket.suffix.count))
            throw ServiceError("\(path) is a job ticket, not a document: process its document \(document) (the ticket beside it goes with it)")
        }
        let job: JobFolder
        // This process's job before its file is in jobs/ (see claimAndRun).
        let id = JobFolder.newID()
        activeJobs.withLock { _ = $0.insert(id) }
        do {
            let source = try Directory(path: directory)
            do {
                guard case .claimed(let j) = try JobFolder.claim(fileName, from: source, relativeFolder: "", into: runtime.area, id: id) else {
                    throw ServiceError("\(path): no such file")
                }
                job = j
            } catch let error as SystemError where error.errno == EXDEV {
                job = try Self.claimByCopy(fileName, from: source, into: runtime.area, id: id)
            }
        } catch let error as ServiceError {
            activeJobs.withLock { _ = $0.remove(id) }
            throw error
        } catch {
            activeJobs.withLock { _ = $0.remove(id) }
            throw ServiceError("cannot take \(path): \(error)")
        }
        if let source = try? Directory(path: directory) { _ = Self.takeTicket(fileName, from: source, into: job) }
        let finished = DispatchSemaphore(value: 0)
        let result = Mutex<JobOutcome?>(nil)
        outcomeWaiters.withLock { $0[job.id] = { outcome in
            result.withLock { $0 = outcome }
            finished.signal()
        } }
        // The one-shot may exit right after: the journal is written out.
        defer { try? runtime.area.journal.flush(sync: false) }
        if let outcome = run(job, runtime, attempt: 0) {
            outcomeWaiters.withLock { $0[job.id] = nil }
            return outcome
        }
        // Parked: a print being followed, or a destination that is unavailable
        // for now. The one-shot waits like the service would. (An export
        // finishes once its sync is done, within moments: no need to say so.)
        if finished.wait(timeout: .now() + 1) == .timedOut {
            log.log(.info, "waiting for \(fileName) to be delivered", folder: name, job: job.id)
            finished.wait()
        }
        return result.withLock { $0 } ?? JobOutcome(folder: name, job: job.id, original: fileName, originalNow: nil, delivered: [], failure: nil, warnings: [])
    }

    /// Claims a file from another file system: copy into the job, then remove the source.
    static func claimByCopy(_ name: String, from source: Directory, into area: JobArea, id: String = JobFolder.newID()) throws -> JobFolder {
        let job = JobFolder(id: id, directory: area.shard(for: id), originalName: name, originalFile: JobFolder.originalFile(id: id, name: name),
                            journal: Journal(job: id, file: area.journal))
        // Copied under a job-relative name and renamed once complete: a copy cut
        // short must not look like an original.
        let partial = ".claiming"
        let input = try source.openForReading(name)
        let copy = try job.create(partial)
        try copy.copyContents(of: input)
        try copy.sync()
        var record = JournalRecord(.claimed)
        record.name = name
        try job.journal.append(record)
        try job.move(partial, to: job.directory, as: job.originalFile, mode: .noReplace)
        try job.directory.sync()
        try source.remove(name)
        return job
    }
}
