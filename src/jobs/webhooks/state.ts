/**
 * Where the webhook of a job stands. `url`, `attempts`, `last_status`, `delivered_at` and `next_attempt_at` are shown.
 */
export interface WebhookState {
  url: string;
  attempts: number;
  /** The HTTP status of the last attempt; null when it got no answer (or none was made yet). */
  last_status: number | null;
  delivered_at: string | null;
  /** `webhook-id`: the same on every attempt, so receivers can drop repeats. */
  message_id: string;
  /** The body, fixed when the job ended, so every attempt sends the same bytes. */
  payload?: string;
  /** When the next attempt is due; null once delivered or given up. */
  next_attempt_at: string | null;
  /** Why the last attempt failed. */
  last_error?: string;
}

/**
 * A record that may owe a delivery: the job record, as far as deliveries read it. Written here rather
 * than imported from jobs/, which uses webhooks/: the two would otherwise import each other.
 */
export interface OwingRecord {
  id: string;
  webhook: WebhookState | null;
}
