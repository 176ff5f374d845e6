import type { EndpointDefinition } from './define.ts';
import { buyCredits, leadScraperMode, wallet } from './api/account.ts';
import {
  leadDatabase,
  leadDatabasePreview,
  localBusinessDatabase,
  revealLeadsEndpoint,
  storeDatabase,
} from './api/database.ts';
import { leadEnrichment, localBusinessEnrichment } from './api/enrichment.ts';
import { ledger } from './api/ledger.ts';
import {
  clearAccountDataset,
  deleteAccountDataset,
  getAccountDataset,
  listAccountDatasets,
  listDatasetRows,
} from './api/datasets.ts';
import {
  createSavedTask,
  createTaskSchedule,
  deleteSavedTask,
  deleteTaskSchedule,
  getSavedTask,
  getTaskSchedule,
  listSavedTasks,
  listTaskSchedules,
  pauseTaskSchedule,
  resumeTaskSchedule,
  startSavedTask,
} from './api/workflows.ts';
import {
  beginProviderConnect,
  connectProviderToken,
  createRowDestination,
  deleteRowDestination,
  disconnectProvider,
  getRowDelivery,
  getRowDestination,
  listProviderConnections,
  listRowDeliveries,
  listRowDestinations,
  resumeRowDestination,
} from './api/destinations.ts';
import { addAccountSuppressions, listAccountSuppressions, removeAccountSuppression } from './api/privacy.ts';
import { listAuditLog } from './api/audit.ts';
import { acknowledgeAccountPermissibleUse, getPermissibleUse } from './api/permissible-use.ts';
import {
  cancelAccountPipeline,
  getAccountPipeline,
  listAccountPipelines,
  pipelineDownloadLink,
  quoteAccountPipeline,
  startAccountPipeline,
} from './api/pipelines.ts';
import {
  createAccountWebhook,
  deleteAccountWebhook,
  listAccountWebhooks,
  listWebhookDeliveries,
  sendTestWebhookEvent,
} from './api/webhooks.ts';

/**
 * Every synchronous endpoint, in the order REST registers and OpenAPI lists them. The REST routes,
 * their OpenAPI entries (with plan and daily-allowance texts), the MCP tools of those with `mcp`, and
 * the GraphQL fields' names and plan gates derive from these declarations.
 */
export const ENDPOINTS: readonly EndpointDefinition<never, never>[] = [
  wallet,
  ledger,
  buyCredits,
  leadScraperMode,
  getPermissibleUse,
  acknowledgeAccountPermissibleUse,
  leadDatabase,
  leadDatabasePreview,
  revealLeadsEndpoint,
  localBusinessDatabase,
  storeDatabase,
  leadEnrichment,
  localBusinessEnrichment,
  createAccountWebhook,
  listAccountWebhooks,
  deleteAccountWebhook,
  listWebhookDeliveries,
  sendTestWebhookEvent,
  listAccountDatasets,
  getAccountDataset,
  listDatasetRows,
  clearAccountDataset,
  deleteAccountDataset,
  createSavedTask,
  listSavedTasks,
  getSavedTask,
  startSavedTask,
  createTaskSchedule,
  listTaskSchedules,
  getTaskSchedule,
  pauseTaskSchedule,
  resumeTaskSchedule,
  deleteTaskSchedule,
  deleteSavedTask,
  quoteAccountPipeline,
  startAccountPipeline,
  listAccountPipelines,
  getAccountPipeline,
  cancelAccountPipeline,
  pipelineDownloadLink,
  listProviderConnections,
  connectProviderToken,
  beginProviderConnect,
  disconnectProvider,
  createRowDestination,
  listRowDestinations,
  getRowDestination,
  resumeRowDestination,
  deleteRowDestination,
  listRowDeliveries,
  getRowDelivery,
  addAccountSuppressions,
  listAccountSuppressions,
  removeAccountSuppression,
  listAuditLog,
] as never;
