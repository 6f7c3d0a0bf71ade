import type { Logger } from 'pino';
import type { Bus, Unsubscribe } from '../bus/bus.js';
import type { Envelope, Pattern } from '../bus/events.js';
import type { SceneMember } from './scene-member.js';
import { wakeOnEvent, wakeOnSpeech, type Scheduling } from './schedule.js';
import type { SpeechLog } from './speech-log.js';

/**
 * How a scene hears its bus: one subscription for speech, and one per bus pattern that some
 * member's triggers name, each routing to just the members that asked. A crowd of a hundred
 * thousand adds no subscriber per member.
 */
export class SceneEars {
  private readonly subscriptions: Unsubscribe[] = [];
  private readonly patterns = new Map<string, SceneMember[]>();
  private readonly speechListeners: SceneMember[] = [];
  private readonly scene: string;
  private readonly bus: Bus;
  private readonly state: () => Omit<Scheduling, 'speechListeners'>;

  constructor(scene: string, bus: Bus, state: () => { members: ReadonlyMap<string, SceneMember>; speech: SpeechLog; tick: number; maxReplyChain: number; logger: Logger }) {
    this.scene = scene;
    this.bus = bus;
    this.state = state;
    this.subscriptions.push(
      bus.on('agent.said', (event) => {
        if (event.scene === scene) wakeOnSpeech(event, this.scheduling());
      }),
    );
  }

  /** Routes to `member` the speech and events its triggers ask for. */
  listenFor(member: SceneMember): void {
    if (member.triggers.speech) this.speechListeners.push(member);
    for (const { on } of member.triggers.on) this.listen(on, member);
  }

  /** Unsubscribes everything (the scene stopped). */
  close(): void {
    for (const unsubscribe of this.subscriptions.splice(0)) unsubscribe();
  }

  private listen(pattern: Pattern, member: SceneMember): void {
    let listeners = this.patterns.get(pattern);
    if (listeners === undefined) {
      const list: SceneMember[] = (listeners = []);
      this.patterns.set(pattern, list);
      this.subscriptions.push(
        this.bus.on(pattern, (event: Envelope) => {
          // Another scene on a shared bus is not this scene's business.
          if (event.scene !== undefined && event.scene !== this.scene) return;
          wakeOnEvent(event, list, this.scheduling(), pattern);
        }),
      );
    }
    listeners.push(member);
  }

  private scheduling(): Scheduling {
    return { ...this.state(), speechListeners: this.speechListeners };
  }
}
