/**
 * An Arrival's status as read: one whose processing ran out of attempts is `failed`, whatever step it stopped
 * at, and says why with the queue's last error. Every read of Arrivals selects these.
 */
export const statusColumn = `CASE WHEN queue_state = 'dead' THEN 'failed' ELSE status END AS status`

export const statusDetailColumn = `CASE WHEN queue_state = 'dead' THEN queue_last_error ELSE status_detail END AS status_detail`
