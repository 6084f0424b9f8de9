// checkpoint_picker.js — checkpoints from the student's disk in the browser (app/core/platform_open.h).
// The Checkpoint window's "Choose a model folder…" button opens the page's folder picker (an
// <input type=file webkitdirectory multiple> of index.html); a folder, or some of its files, dropped
// onto the page does the same. Either way: only the files attnscope reads are kept (config.json and the
// other .json files, *.safetensors with their index, tokenizer files, attentions .npy), their sizes are
// summed and a folder larger than the window's limit (attnscope_web_folder_limit, 2 GiB of a 4 GiB
// WebAssembly memory) is refused before one byte is copied; otherwise the files are copied into the
// page's memory under /models/<name>/ and the window opens that folder with the desktop's loader. A
// file that cannot be read or copied (the browser's memory is full) is refused with its name and reason.
// The window says each of these on screen; nothing here throws into the page.
'use strict';
(function () {
  const read = /\.(json|safetensors|npy|txt)$/i;  // what the checkpoint and tokenizer readers look for
  const root = '/models';
  let busy = false;

  // One path component, as the page's file system takes it.
  function safeName(name) {
    const s = String(name).replace(/[\/\\\0]/g, '_').trim();
    return s === '' || s === '.' || s === '..' ? 'model' : s;
  }

  // Frees the folders copied before: one model is open at a time, and its files are its memory.
  function forgetEarlierFolders(FS) {
    let names = [];
    try { names = FS.readdir(root); } catch (e) { return; }
    for (const name of names) {
      if (name === '.' || name === '..') continue;
      const dir = root + '/' + name;
      try {
        for (const file of FS.readdir(dir)) if (file !== '.' && file !== '..') FS.unlink(dir + '/' + file);
        FS.rmdir(dir);
      } catch (e) {
        console.warn('attnscope: could not free ' + dir + ': ' + e);
      }
    }
  }

  // Copies `files` (File objects of one folder) into /models/<name>/ and asks the window to open it.
  async function copyFolder(name, files) {
    const M = Module;
    if (!M._attnscope_web_folder_copied) return;  // the window has not started yet
    if (busy) return;
    name = safeName(name);
    files = files.filter((f) => read.test(f.name));
    const total = files.reduce((sum, f) => sum + f.size, 0);
    if (total > M._attnscope_web_folder_limit()) {
      M.ccall('attnscope_web_folder_too_big', null, ['string', 'number'], [name, total]);
      return;
    }
    busy = true;
    const FS = M.FS;
    const dir = root + '/' + name;
    try {
      forgetEarlierFolders(FS);
      FS.mkdirTree(dir);
      let done = 0;
      M.ccall('attnscope_web_folder_copying', null, ['string', 'number', 'number'], [name, 0, total]);
      for (const file of files) {
        let bytes;
        try {
          bytes = new Uint8Array(await file.arrayBuffer());
          // canOwn: the page's file system keeps this buffer rather than a second copy of it.
          const stream = FS.open(dir + '/' + safeName(file.name), 'w');
          FS.write(stream, bytes, 0, bytes.length, 0, true);
          FS.close(stream);
        } catch (e) {
          forgetEarlierFolders(FS);
          M.ccall('attnscope_web_folder_unreadable', null, ['string', 'string', 'string'],
                  [name, file.name, String((e && (e.name + ': ' + e.message)) || e)]);
          return;
        }
        done += file.size;
        M.ccall('attnscope_web_folder_copying', null, ['string', 'number', 'number'], [name, done, total]);
        await new Promise((resolve) => setTimeout(resolve, 0));  // a frame between files: the bar moves
      }
      M.ccall('attnscope_web_folder_copied', null, ['string'], [dir]);
    } finally {
      busy = false;
    }
  }

  // The folder's name from the picker's relative paths ("gpt2/config.json"), else "model".
  function folderOf(files) {
    const first = files.length && files[0].webkitRelativePath ? files[0].webkitRelativePath.split('/')[0] : '';
    return first || 'model';
  }

  // The files directly inside a dropped folder (readEntries answers in batches until an empty one).
  function folderFiles(entry) {
    return new Promise((resolve, reject) => {
      const reader = entry.createReader();
      const entries = [];
      const next = () => reader.readEntries((batch) => {
        if (batch.length === 0) {
          Promise.all(entries.filter((e) => e.isFile).map((e) => new Promise((ok, fail) => e.file(ok, fail))))
            .then(resolve, reject);
        } else {
          entries.push(...batch);
          next();
        }
      }, reject);
      next();
    });
  }

  function carriesFiles(event) {
    return event.dataTransfer && Array.from(event.dataTransfer.types || []).includes('Files');
  }

  function install() {
    const input = document.getElementById('checkpoint-picker');
    input.addEventListener('change', () => {
      const files = Array.from(input.files || []);
      input.value = '';  // the same folder picked again is a change again
      if (files.length) copyFolder(folderOf(files), files);
    });
    // Drops are taken before the canvas's own GLFW handler (capture on the window), which would copy
    // every file whatever its size.
    window.addEventListener('dragover', (event) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      event.stopPropagation();
      event.dataTransfer.dropEffect = 'copy';
    }, true);
    window.addEventListener('drop', (event) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      event.stopPropagation();
      // The entries are read now: the DataTransfer is emptied once the event returns.
      const items = Array.from(event.dataTransfer.items || []).filter((i) => i.kind === 'file');
      const entries = items.map((i) => (i.webkitGetAsEntry ? i.webkitGetAsEntry() : null));
      const files = Array.from(event.dataTransfer.files || []);
      if (entries.length === 1 && entries[0] && entries[0].isDirectory) {
        const folder = entries[0];
        folderFiles(folder).then((list) => copyFolder(folder.name, list), (e) =>
          Module.ccall('attnscope_web_folder_unreadable', null, ['string', 'string', 'string'],
                       [safeName(folder.name), folder.name, String(e && e.message || e)]));
      } else if (files.length) {
        copyFolder(folderOf(files), files);  // files of one folder, dropped together
      }
    }, true);
  }

  Module.attnscopePicker = {
    pick: () => document.getElementById('checkpoint-picker').click(),
    copyFolder,  // tests: a folder of File objects, as a drop gives them
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', install);
  else install();
})();
