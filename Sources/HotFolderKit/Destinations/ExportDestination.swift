import Foundation
import Glibc

/// Delivers a staged file into an export folder: synced where it was made,
/// then renamed to its final name (on another file system: copied to a hidden
/// temporary name there, synced, then renamed), so no reader ever sees a
/// partial file under the final name. Each step is journaled first.
/// The syncs are the caller's (`HotFolderService.run`), so that the thread
/// does not wait for them.
struct ExportDestination {
    let sharing: SharingConfiguration
    let folder: Directory

    enum Delivery: Equatable {
        /// Every file is in place: the final names, and whether any was placed now
        /// (false: an earlier run had delivered them all).
        case delivered(names: [String], now: Bool)
        /// Files wait for their final names (in the job, or under temporary
        /// names in the export folder); they are placed once a sync of the
        /// job's and the export folder's file systems has made them and their
        /// records durable (`JobFolder.exportsDurable(_:)`), by calling
        /// `deliver` again.
        case needsSync
    }

    /// Delivers every file of `output` (the document, or one image per page,
    /// and the sidecars) in two rounds with one sync between them, however
    /// many files there are: each file is journaled as being exported (and
    /// copied to a temporary name on another file system), then, once that
    /// is durable, renamed to its final name.
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
        let exporting = job.journal.last(.exporting, destination: .export, item: file)
        // On the job's file system the file goes from the job straight to its
        // final name (one rename); on another it is copied to a temporary
        // name in the export folder first. A record says which was chosen.
        let direct = exporting.map { $0.temporary == nil } ?? sameFileSystem(as: job)
        /// The file still waits for its final name.
        func waiting() -> Bool { direct ? job.exists(file) : folder.exists(temporary) }
        // Delivered, unless a crash lost the rename into place but not its
        // record (the file still waits): then it is placed again.
        if let done = job.journal.last(.exported, destination: .export, item: file), let name = done.name,
           !(job.resumed && waiting()) {
            return .placed(name, now: false)
        }
        do {
            guard job.exportsSynced.contains(file) else {
                if let exporting, !waiting(), direct || !job.exists(file) {
                    // The rename into place happened before the restart; only its record is missing.
                    let name = exporting.name ?? finalName
                    try job.journal.append(.exported, destination: .export) { $0.name = name; $0.item = file }
                    return .placed(name, now: false)
                }
                if !direct {
                    do {
                        try stage(file, of: job, as: temporary)
                    } catch {
                        // Staged by an earlier attempt (the staged file is gone, its
                        // temporary name is there). Asked only now: the first attempt
                        // needs no look.
                        guard error.errno == ENOENT, folder.exists(temporary) else { throw error }
                    }
                }
                try recordExporting(file, as: finalName, via: direct ? nil : temporary, job: job)
                // The result's bytes and the record that it is being published
                // must be durable before its final name exists: a crash can then
                // neither show a partial file nor make a restart publish it
                // twice. The caller has that sync made (shared with other
                // documents) and calls again.
                job.exportsStaged.insert(file)
                return .staged
            }
            let placed: String
            do {
                placed = try direct ? place(from: job.directory, named: job.name(file), as: finalName)
                                    : place(from: folder, named: temporary, as: finalName)
            } catch let error as SystemError where direct && error.errno == EXDEV {
                // The same device but another mount (a bind mount): copied to a
                // temporary name after all, and synced again before it is placed.
                try stage(file, of: job, as: temporary)
                try recordExporting(file, as: finalName, via: temporary, job: job)
                job.exportsNeedSyncAgain(file)
                return .staged
            }
            // Not synced here: the final name must be durable before the
            // original leaves the job, and the service makes it so once for
            // all of a job's files, in a sync shared with other documents
            // (HotFolderService.run). Should the record be lost, the file no
            // longer waiting tells that the rename happened.
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

    /// Journals that `file` is being exported as `finalName`, waiting in the
    /// job (`temporary` nil) or under `temporary` in the export folder.
    private func recordExporting(_ file: String, as finalName: String, via temporary: String?, job: JobFolder) throws(SystemError) {
        try job.journal.append(.exporting, destination: .export, sync: false) {
            $0.name = finalName
            $0.temporary = temporary
            $0.item = file
        }
    }

    /// Whether the job's files can be renamed into the export folder.
    private func sameFileSystem(as job: JobFolder) -> Bool {
        guard let here = try? folder.device(), let there = try? job.directory.device() else { return false }
        return here == there
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

    /// Renames the waiting file (`name` in `source`) to its final name.
    private func place(from source: Directory, named waiting: String, as name: String) throws -> String {
        switch sharing.collision {
        case .replace:
            try source.move(waiting, to: folder, as: name, mode: .replace)
            return name
        case .fail:
            do {
                try source.move(waiting, to: folder, as: name, mode: .noReplace)
                return name
            } catch {
                guard error.errno == EEXIST else { throw error }
                // A temporary copy goes; a file in the job goes with the job.
                if source === folder { try? folder.remove(waiting) }
                throw JobFailure(.export, "\"\(name)\" already exists in \(folder.path) and export.collision = fail",
                                 remedy: "Remove or rename the existing file and drop the document again, or set export.collision = rename.")
            }
        case .rename:
            for n in 1...10_000 {
                let candidate = n == 1 ? name : FileNameSanitizer.numbered(name, n)
                do {
                    try source.move(waiting, to: folder, as: candidate, mode: .noReplace)
                    return candidate
                } catch {
                    guard error.errno == EEXIST else { throw error }
                }
            }
            throw JobFailure(.export, "10,000 files named like \"\(name)\" already exist in \(folder.path)", remedy: "Clean up the export folder.", transient: true)
        }
    }
}
