import Foundation
import Glibc

/// The worker side: `hotfolder worker` reads requests on stdin and answers on
/// stdout until stdin closes. A document that crashes the PDF engine kills
/// this process only; the service sees the signal and starts another worker.
public enum WorkerMain {
    public static func run(memoryLimit: Int?) -> Int32 {
        PDFDocument.tuneAllocator()
        if let memoryLimit, memoryLimit > 0 {
            var limit = rlimit(rlim_cur: rlim_t(memoryLimit), rlim_max: rlim_t(memoryLimit))
            // RLIMIT_DATA (heap and private mappings) rather than RLIMIT_AS: the
            // address space of the runtime and its libraries alone passes 64M.
            _ = setrlimit(Int32(RLIMIT_DATA.rawValue), &limit)
        }
        signal(SIGPIPE, SIG_IGN)
        var state = State()
        while true {
            switch Frame.read(GenerationRequest.self, from: 0, deadline: nil) {
            case .value(let request):
                let response = handle(request, &state)
                guard Frame.write(response, to: 1) else { return 1 }
            case .endOfFile:
                return 0
            case .timedOut, .broken:
                return 1
            }
        }
    }

    /// Test hook: a worker started with HOTFOLDER_TEST_CRASH_MARKER set dies of
    /// SIGSEGV on any document whose name contains the marker, as a document
    /// that crashes libqpdf would make it die.
    static let crashMarker = ProcessInfo.processInfo.environment["HOTFOLDER_TEST_CRASH_MARKER"].flatMap { $0.isEmpty ? nil : $0 }

    /// What a worker keeps between documents: the folder's configuration (sent
    /// only when it changes) and the job folders (shards) it opened.
    struct State {
        var folder: FolderConfiguration?
        var jobs: [String: Directory] = [:]
    }

    static func handle(_ request: GenerationRequest, _ state: inout State) -> GenerationResponse {
        if let crashMarker, request.originalName.contains(crashMarker) {
            // The default action, not Swift's crash backtracer: its handler
            // returns, and a raised (unlike a real) SIGSEGV does not come again,
            // so the worker would go on and generate the document.
            signal(SIGSEGV, SIG_DFL)
            raise(SIGSEGV)
        }
        if let folder = request.folder { state.folder = folder }
        guard let folder = state.folder else {
            return .failure(JobFailure(.generate, "the worker got a document before its folder's configuration", remedy: "Drop the document again.", transient: true))
        }
        let jobs: Directory
        do {
            // The folder opened for an earlier document, unless the drop folder
            // was made anew since (same path, another folder).
            if let open = state.jobs[request.jobsDirectory],
               request.jobsIdentity == nil || (try? open.identity()) == request.jobsIdentity {
                jobs = open
            } else {
                jobs = try Directory(path: request.jobsDirectory)
                // Bounded: a few folders' 16 shards; a drop folder made anew replaces its entries.
                if state.jobs.count >= 256 { state.jobs.removeAll() }
                state.jobs[request.jobsDirectory] = jobs
            }
        } catch {
            return .failure(JobFailure(.generate, "the worker cannot open the job folder: \(error)", remedy: "Check the service area's permissions.", transient: true))
        }
        let job = JobFolder(id: request.jobID, directory: jobs, originalName: request.originalName, originalFile: request.originalFile)
        job.mayHaveTicket = request.mayHaveTicket
        do {
            return .result(try Pipeline(folder: folder, job: job, now: Date(timeIntervalSince1970: request.now), number: request.number).run())
        } catch {
            return .failure(error)
        }
    }
}
