// The microphone's samples, handed to the page as they come (128 at a time), for talk.js.
class Capture extends AudioWorkletProcessor {
  process(inputs) {
    const channel = inputs[0]?.[0];
    if (channel) this.port.postMessage(channel.slice(0));
    return true;
  }
}
registerProcessor('nvr-capture', Capture);
