import Foundation
import Glibc

/// Delivers a staged file into an export folder: moved (or copied) to a hidden
/// temporary name there, synced, then renamed to its final name, so no reader
/// ever sees a partial file under the final name. Each step is journaled first.
/// The syncs are the caller's (`HotFolderService.run`), so that the thread
/// does not wait for them.
struct ExportDestination {
    let sharing: SharingConfiguration
    let folder: Directory

    enum Delivery: Equatable {
        /// Every file is in place: the final names, and whether any was placed now
        /// (false: an earlier run had delivered them all).
        case delivered(names: [String], now: Bool)
        /// Files were put under their temporary names in the export folder;
        /// they are placed once a sync of the job's and the export folder's
        /// file systems has made them and their records durable
        /// (`JobFolder.exportsSynced()`), by calling `deliver` again.
        case needsSync
    }

    /// Delivers every file of `output` (the document, or one image per page,
    /// and the sidecars) in two rounds with one sync between them, however
    /// many files there are: each file is staged under a temporary name, then,
    /// once that is durable, renamed to its final name.
    func deliver(_ output: StagedOutput, job: JobFolder, values: [NameTemplate.Placeholder: String]) throws(JobFailure) -> Delivery {
        var names: [String] = []
        var now = false
        var waiting = false
        var sidecarStem: String?
        let base = output.name ?? sharing.name.render(values)
        for (index, staged) in output.files.enumerated() {
            let finalName: String
            switch staged.role {
            case .document:
                finalName = FileNameSanitizer.fileName(rendered: base, ext: output.ext)
            case .page:
                let page = Self.pageLabel(staged.page ?? index + 1, of: output.documentPages)
                if output.name == nil && sharing.name.uses(.page) {
                    var withPage = values
                    withPage[.page] = page
                    finalName = FileNameSanitizer.fileName(rendered: sharing.name.render(withPage), ext: output.ext)
                } else {
                    finalName = FileNameSanitizer.fileName(rendered: output.pageCount > 1 ? base + "-" + page : base, ext: output.ext)
                }
            case .preview, .annotations:
                // Sidecars are named after the document as it was placed, so
                // "report (2).pdf" gets "report (2).preview.png". (Files are
                // placed in order, the document first.)
                let stem = sidecarStem ?? FileNameSanitizer.sanitize(base)
                finalName = FileNameSanitizer.fileName(rendered: stem, ext: staged.role == .preview ? "preview.png" : "annotations.json")
            }
            switch try deliver(staged.file, as: finalName, item: index, job: job) {
            case .placed(let name, let placedNow):
                if staged.role == .document { sidecarStem = FileNameSanitizer.split(name).stem }
                names.append(name)
                now = now || placedNow
            case .staged:
                waiting = true
            }
        }
        return waiting ? .needsSync : .delivered(names: names, now: now)
    }

    /// `3`, or `03` in a document of 10 to 99 pages, so that names sort in page order.
    static func pageLabel(_ page: Int, of total: Int) -> String {
        let digits = String(max(total, page)).count
        let s = String(page)
        return String(repeating: "0", count: max(0, digits - s.count)) + s
    }

    private enum FileState {
        case placed(String, now: Bool)
        /// Under its temporary name, waiting for a sync.
        case staged
    }

    private func deliver(_ file: String, as finalName: String, item index: Int, job: JobFolder) throws(JobFailure) -> FileState {
        let temporary = index == 0 ? ".hf-\(job.id).tmp" : ".hf-\(job.id)-\(index).tmp"
        // Delivered, unless a crash lost the rename into place but not its
        // record (the temporary file is still there): then it is placed again.
        if let done = job.journal.last(.exported, destination: .export, item: file), let name = done.name,
           !(job.resumed && folder.exists(temporary)) {
            return .placed(name, now: false)
        }
        do {
            guard job.exportsSynced.contains(file) else {
                if let resumed = job.journal.last(.exporting, destination: .export, item: file), !folder.exists(temporary),
                   !job.exists(file) {
                    // The rename into place happened before the restart; only its record is missing.
                    let name = resumed.name ?? finalName
                    try job.journal.append(.exported, destination: .export) { $0.name = name; $0.item = file }
                    return .placed(name, now: false)
                }
                do {
                    try stage(file, of: job, as: temporary)
                } catch {
                    // Staged by an earlier attempt (the staged file is gone, its
                    // temporary name is there). Asked only now: the first attempt
                    // needs no look.
                    guard error.errno == ENOENT, folder.exists(temporary) else { throw error }
                }
                try job.journal.append(.exporting, destination: .export, sync: false) {
                    $0.name = finalName
                    $0.temporary = temporary
                    $0.item = file
                }
                // The result's bytes and the record that it is being published
                // must be durable before its final name exists: a crash can then
                // neither show a partial file nor make a restart publish it
                // twice. The caller has that sync made (shared with other
                // documents) and calls again.
                job.exportsStaged.insert(file)
                return .staged
            }
            let placed = try place(temporary, as: finalName)
            // Not synced here: the final name must be durable before the
            // original leaves the job, and the service makes it so once for
            // all of a job's files, in a sync shared with other documents
            // (HotFolderService.run). Should the record be lost, the missing
            // temporary file tells that the rename happened.
            try job.journal.append(.exported, destination: .export, sync: false) { $0.name = placed; $0.item = file }
            return .placed(placed, now: true)
        } catch let failure as JobFailure {
            throw failure
        } catch let error as SystemError {
            throw JobFailure(.export, "cannot write into \(folder.path): \(error)",
                             remedy: "Check that the export folder exists, is writable by the service and has free space; the document is kept and retried.",
                             transient: error.isTransient)
        } catch {
            throw JobFailure(.export, "\(error)", remedy: "Check the export folder.", transient: true)
        }
    }

    /// Puts the staged file under the temporary name in the export folder.
    private func stage(_ file: String, of job: JobFolder, as temporary: String) throws(SystemError) {
        do {
            try job.move(file, to: folder, as: temporary, mode: .replace)
            return
        } catch {
            // Another file system: copy, then sync, so the rename publishes whole data.
            guard error.errno == EXDEV else { throw error }
        }
        let input = try job.openForReading(file)
        try? folder.remove(temporary)
        let copy = try folder.createFile(temporary)
        try copy.copyContents(of: input)
    }

    private func place(_ temporary: String, as name: String) throws -> String {
        switch sharing.collision {
        case .replace:
            try folder.move(temporary, to: folder, as: name, mode: .replace)
            return name
        case .fail:
            do {
                try folder.move(temporary, to: folder, as: name, mode: .noReplace)
                return name
            } catch {
                guard error.errno == EEXIST else { throw error }
                try? folder.remove(temporary)
                throw JobFailure(.export, "\"\(name)\" already exists in \(folder.path) and export.collision = fail",
                                 remedy: "Remove or rename the existing file and drop the document again, or set export.collision = rename.")
            }
        case .rename:
            for n in 1...10_000 {
                let candidate = n == 1 ? name : FileNameSanitizer.numbered(name, n)
                do {
                    try folder.move(temporary, to: folder, as: candidate, mode: .noReplace)
                    return candidate
                } catch {
                    guard error.errno == EEXIST else { throw error }
                }
            }
            throw JobFailure(.export, "10,000 files named like \"\(name)\" already exist in \(folder.path)", remedy: "Clean up the export folder.", transient: true)
        }
    }
}
