import Foundation
import Glibc
import Synchronization

/// Runs the pipeline for a job: in this process, or in a pool of long-lived
/// worker processes so that a document that crashes the PDF engine takes down
/// a worker, never the service.
final class Generator: Sendable {
    enum Mode: Sendable {
        case inProcess
        case workers(executable: String, timeout: Double, memoryLimit: Int?)
    }

    let mode: Mode
    private let idle = Mutex<[WorkerProcess]>([])
    /// Workers generating right now, by pid.
    private let busy = Mutex<Set<pid_t>>([])
    /// Set by killBusyWorkers(): a worker that dies from now on was killed by us.
    private let stopping = Mutex(false)
    /// At most `workers` documents are generated at once (one per core).
    private let slots: DispatchSemaphore

    init(mode: Mode, concurrency: Int) {
        self.mode = mode
        if case .inProcess = mode { PDFDocument.tuneAllocator() }
        self.slots = DispatchSemaphore(value: max(1, concurrency))
    }

    func generate(folder: FolderConfiguration, job: JobFolder, now: Date = Date(), number: Int? = nil) throws(JobFailure) -> PipelineResult {
        slots.wait()
        defer { slots.signal() }
        guard case .workers(let executable, let timeout, let memoryLimit) = mode else {
            return try Pipeline(folder: folder, job: job, now: now, number: number).run()
        }
        let worker: WorkerProcess
        do {
            worker = try idle.withLock { $0.popLast() } ?? WorkerProcess(executable: executable, memoryLimit: memoryLimit)
        } catch {
            throw JobFailure(.generate, "cannot start a worker process: \(error)", remedy: "Check the service's limits (processes, memory); the job is retried.", transient: true)
        }
        busy.withLock { _ = $0.insert(worker.pid) }
        defer { busy.withLock { _ = $0.remove(worker.pid) } }
        // The configuration goes only to a worker that does not have it yet.
        let request = GenerationRequest(folder: worker.folder == folder ? nil : folder, jobsDirectory: job.directory.path,
                                        jobsIdentity: try? job.directory.identity(), jobID: job.id,
                                        originalFile: job.originalFile, originalName: job.originalName, mayHaveTicket: job.mayHaveTicket,
                                        now: now.timeIntervalSince1970, number: number)
        worker.folder = folder
        let outcome = worker.generate(request, timeout: timeout)
        if case .answered = outcome {} else if stopping.withLock({ $0 }) {
            // Killed by killBusyWorkers() at shutdown: not the document's fault
            // (nor job-memory's); it stays journaled and is redone at the next start.
            throw JobFailure(.generate, "the service stopped while the document was being generated",
                             remedy: "It is generated again at the next start.", transient: true)
        }
        switch outcome {
        case .answered(let response):
            idle.withLock { $0.append(worker) }
            switch response {
            case .result(let result): return result
            case .failure(let failure): throw failure
            }
        case .died(let signal?, _):
            let name = String(cString: strsignal(signal))
            if signal == SIGKILL {
                throw JobFailure(.generate, "the PDF engine was killed (signal \(signal), \(name)) while working on this document; it may need more memory than job-memory allows",
                                 remedy: "Simplify the document (print it to a new PDF) or raise [service] job-memory.")
            }
            throw JobFailure(.generate, "the document crashed the PDF engine (signal \(signal), \(name))",
                             remedy: "The file is malformed in a way the PDF engine cannot survive; open it in a PDF viewer, print or save it to a new PDF, and drop that.")
        case .died(_, let status):
            throw JobFailure(.generate, "the PDF engine exited unexpectedly (status \(status ?? -1)) on this document",
                             remedy: "Drop the document again; if it fails again, save it anew from a PDF viewer.")
        case .timedOut:
            throw JobFailure(.generate, "generating took longer than job-timeout (\(HotFolderService.format(timeout))); the document may be a decompression bomb or far too complex",
                             remedy: "Simplify the document (print it to a new PDF), or raise [service] job-timeout if such documents are expected.")
        case .broken(let message):
            throw JobFailure(.generate, "the worker process failed: \(message)", remedy: "Drop the document again.", transient: true)
        }
    }

    /// Kills the workers that are still generating (at shutdown, after the timeout).
    func killBusyWorkers() {
        stopping.withLock { $0 = true }
        for pid in busy.withLock({ $0 }) { kill(pid, SIGKILL) }
    }

    /// Ends the idle workers (their stdin closes; they exit).
    func shutdown() { idle.withLock { $0.removeAll() } }
}
