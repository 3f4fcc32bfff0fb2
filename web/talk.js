// Talking through a camera's speaker: "Hold to talk" (or hold Space on it) sends the microphone
// to the NVR over a WebSocket as 16-bit PCM at the browser's rate, 40 ms a message; the NVR
// converts it to what the camera takes and plays it on the camera's audio back-channel.
// Letting go closes the socket, which ends the camera's session. The button is offered only
// when this user may talk and the camera answered that it can be talked through.
import { get, cam, APIError } from './api.js';
import { h, toast } from './dom.js';

export function talkButton(name, session) {
  const button = h('button.talk', { type: 'button', id: 'talk', hidden: true, title: 'Hold to talk through the camera (or hold Space)' }, 'Hold to talk');
  if (!session.talk) return { button, dispose() {} };
  // `press` numbers each press: what a press set up after an await is its own, and is undone
  // at once if the button was let go (or pressed again) meanwhile.
  let held = false, press = 0, parts = null;

  async function start() {
    if (held) return;
    held = true;
    const mine = ++press;
    const current = () => held && press === mine;
    button.classList.add('active');
    button.textContent = 'Connecting…';
    // Made here, in the press itself: an AudioContext made after an await may start suspended
    // (the browser's autoplay rule), and then it never hands over a sample.
    const ctx = new AudioContext();
    let stream = null;
    const undo = () => { stream?.getTracks().forEach((t) => t.stop()); ctx.close(); };
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true } });
      if (!current()) return undo();
      await ctx.audioWorklet.addModule('/app/talk-worklet.js');
      if (ctx.state !== 'running') await ctx.resume();
      if (!current()) return undo();
      const source = ctx.createMediaStreamSource(stream);
      const node = new AudioWorkletNode(ctx, 'nvr-capture');
      const mute = ctx.createGain();
      mute.gain.value = 0; // pulled by the output, heard by no one
      source.connect(node); node.connect(mute); mute.connect(ctx.destination);
      const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
      const ws = new WebSocket(`${scheme}://${location.host}/api/cameras/${cam(name)}/talk`);
      ws.binaryType = 'arraybuffer';
      const p = { stream, ctx, node, ws, ready: false, pending: [], count: 0 };
      parts = p;
      const chunk = Math.round(ctx.sampleRate / 25);
      ws.onopen = () => ws.send(JSON.stringify({ format: 's16le', rate: ctx.sampleRate, channels: 1 }));
      ws.onmessage = (m) => {
        const msg = JSON.parse(m.data);
        if (msg.type === 'ready') { p.ready = true; button.textContent = 'Talking…'; button.title = `Sent as ${msg.codec} at ${msg.rate} Hz`; }
        else if (msg.type === 'error') { toast(`Talk: ${msg.message}`); if (parts === p) stop(); }
      };
      ws.onclose = () => { if (parts === p) stop(); };
      node.port.onmessage = (e) => {
        if (!p.ready) return;
        p.pending.push(e.data); p.count += e.data.length;
        if (p.count < chunk) return;
        const out = new Int16Array(p.count);
        let at = 0;
        for (const block of p.pending) for (const v of block) out[at++] = Math.max(-1, Math.min(1, v)) * 32767;
        p.pending = []; p.count = 0;
        if (ws.readyState === WebSocket.OPEN) ws.send(out.buffer);
      };
    } catch (e) {
      undo();
      toast(`Talk: ${e.name === 'NotAllowedError' ? 'the browser was not allowed to use the microphone' : e.message}`);
      if (current()) stop();
    }
  }

  function stop() {
    held = false;
    button.classList.remove('active');
    button.textContent = 'Hold to talk';
    const p = parts;
    parts = null;
    if (!p) return;
    p.ws.onclose = null;
    p.ws.close();
    p.node.port.onmessage = null;
    p.stream.getTracks().forEach((t) => t.stop()); // the browser's microphone light goes off
    p.ctx.close();
  }

  button.addEventListener('pointerdown', (e) => { e.preventDefault(); button.setPointerCapture?.(e.pointerId); start(); });
  for (const ev of ['pointerup', 'pointercancel', 'lostpointercapture']) button.addEventListener(ev, stop);
  button.addEventListener('keydown', (e) => { if (e.key === ' ' && !e.repeat) { e.preventDefault(); start(); } });
  button.addEventListener('keyup', (e) => { if (e.key === ' ') stop(); });
  window.addEventListener('blur', stop);

  // Offered when the camera says it can be talked through (it opens and closes its back-channel).
  get(`/api/cameras/${cam(name)}/talk`).then((t) => {
    button.hidden = false;
    button.dataset.codec = t.codec;
  }).catch((e) => {
    // Someone talking now: offered (pressing says busy until they stop).
    if (e instanceof APIError && e.code === 'busy') button.hidden = false;
    else if (!(e instanceof APIError) || e.status !== 409) console.warn('talk:', e.message);
  });

  return { button, dispose() { stop(); window.removeEventListener('blur', stop); } };
}
