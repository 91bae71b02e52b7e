// Chime web center: sound, a short synthesized chime; the AudioContext starts only after a user gesture.
import { toast } from "./dom.js";
import { hooks } from "./state.js";

export const sound = { on: readSetting("chime.sound") !== "off", context: null, blocked: false, requested: 0 };

function readSetting(name) {
  try { return localStorage.getItem(name); } catch (e) { return null; }
}

function writeSetting(name, value) {
  try { localStorage.setItem(name, value); } catch (e) { /* private mode */ }
}

export function unlockAudio() {
  if (!sound.on) return;
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!Context) return;
  try {
    if (!sound.context) sound.context = new Context();
    if (sound.context.state === "suspended") sound.context.resume().then(() => { if (sound.blocked) { sound.blocked = false; hooks.renderHeader(); } });
    else if (sound.blocked) { sound.blocked = false; hooks.renderHeader(); }
  } catch (e) { /* no audio device */ }
}

export function playChime(level) {
  if (!sound.on) return;
  sound.requested++;
  document.body.dataset.chimes = String(sound.requested);
  document.body.dataset.lastChime = level || "active";
  const context = sound.context;
  if (!context || context.state !== "running") {
    if (!sound.blocked) {
      sound.blocked = true;
      hooks.renderHeader();
      toast("A notification wanted to play a sound: click anywhere on the page once to allow sounds.", "info");
    }
    return;
  }
  const notes = level === "critical"
    ? [[1568, 0], [1175, 0.16], [1568, 0.32], [1175, 0.48], [1568, 0.64]]
    : level === "timeSensitive" ? [[988, 0], [1319, 0.1], [1760, 0.2]] : [[1319, 0], [1760, 0.13]];
  const start = context.currentTime + 0.02;
  const master = context.createGain();
  master.gain.value = level === "critical" ? 0.42 : 0.26;
  master.connect(context.destination);
  for (const [frequency, at] of notes) tone(context, master, frequency, start + at, level === "critical" ? 0.3 : 0.9);
}

function tone(context, output, frequency, start, length) {
  for (const [multiple, level, type] of [[1, 1, "sine"], [2.76, 0.12, "sine"], [5.4, 0.04, "sine"]]) {
    const oscillator = context.createOscillator();
    const gain = context.createGain();
    oscillator.type = type;
    oscillator.frequency.value = frequency * multiple;
    gain.gain.setValueAtTime(0.0001, start);
    gain.gain.exponentialRampToValueAtTime(level, start + 0.006);
    gain.gain.exponentialRampToValueAtTime(0.0001, start + length / multiple);
    oscillator.connect(gain);
    gain.connect(output);
    oscillator.start(start);
    oscillator.stop(start + length + 0.05);
  }
}

export function toggleSound() {
  sound.on = !sound.on;
  writeSetting("chime.sound", sound.on ? "on" : "off");
  if (sound.on) {
    unlockAudio();
    sound.blocked = false;
    setTimeout(() => { if (sound.context && sound.context.state === "running") previewChime(); }, 30);
  }
  hooks.renderHeader();
}

function previewChime() {
  const before = sound.requested;
  playChime("active");
  sound.requested = before;
  document.body.dataset.chimes = String(before);
}
