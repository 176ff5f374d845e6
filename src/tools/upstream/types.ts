import type { UpstreamItem } from '../../upstream/engine.ts';
import type { Row } from '../types.ts';

/**
 * How a tool runs on an upstream actor (TOOL_SOURCES, docs/upstream.md): the actor it runs unless the
 * operator names another, how the tool's input becomes the actor's input within the run's bound, and
 * how each dataset item becomes one of the tool's rows. Declared beside the tool, in this folder.
 */
export interface UpstreamDeclaration<I = unknown> {
  tool: string;
  /** The actor of `tool=apify`, as the API names it (`username~actor-name`). */
  defaultActor: string;
  /** The actor's public page, for the docs. */
  actorUrl: string;
  /** Memory of a run, MB, as the actor's README recommends; absent: the actor's default. */
  memoryMbytes?: number;
  /**
   * The least the actor lets a run be allowed to charge, USD (its minimum `maxTotalChargeUsd`): a start
   * that would hold less is refused at once. The platform refuses the upstream start too, should the
   * actor's minimum rise (the run then fails saying so, nothing charged).
   */
  minimumChargeUsd?: number;
  /**
   * The actor's input for a run of `input` that may deliver at most `maxItems` rows (what the
   * caller's hold pays for): every limit of the actor's own input is set to it or lower.
   */
  input(input: I, maxItems: number): Record<string, unknown>;
  /**
   * The tool's columns the actor leaves empty with the input declared here, each with why (an add-on
   * not switched on, a field it does not publish): said in docs/upstream.md, checked against the
   * actor's published items.
   */
  unavailableColumns?: Record<string, string>;
  /**
   * What of `input` the actor cannot be asked for (a filter value outside its vocabulary), in words:
   * such a start is refused, rather than run as a wider search than the caller asked for.
   */
  unsupported?(input: I): string[];
  /** One dataset item as a row of the tool's columns; null for an item that is not a result (skipped, never billed). */
  row(item: UpstreamItem, input: I): Row | null;
  /**
   * A limit of the tool the actor has no input for, kept over a run's rows in dataset order: made once
   * per reading of the run, it answers whether each row is kept (one that is not is skipped, never
   * billed). A reading resumed by another worker starts it afresh from the stored offset.
   */
  limit?(input: I): (row: Row) => boolean;
}

export const defineUpstream = <I>(declaration: UpstreamDeclaration<I>): UpstreamDeclaration<I> => declaration;

/** A text field of an item, or null. */
export const text = (value: unknown): string | null =>
  typeof value === 'string' && value.trim() !== '' ? value : null;

/** A finite number, or null. */
export const num = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value)
    ? value
    : typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))
      ? Number(value)
      : null;

/** A whole number, or null. */
export const int = (value: unknown): number | null => {
  const n = num(value);
  return n === null ? null : Math.trunc(n);
};

/** The strings of a list, or null when there are none. */
export const texts = (value: unknown): string[] | null => {
  if (!Array.isArray(value)) return null;
  const out = value.filter((v): v is string => typeof v === 'string' && v.trim() !== '');
  return out.length > 0 ? out : null;
};

/** A nested object, or an empty one. */
export const obj = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
