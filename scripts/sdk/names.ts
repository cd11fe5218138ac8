// The SDKs' name of each operation of the document: its resource (a namespace of the client) and
// its method there, in camelCase (the TypeScript SDK's; the Python SDK writes them in snake_case).
// The generator refuses a document with an operation this table does not name, so a new route
// gets a readable name before it reaches a client.
export const OPERATION_NAMES: Record<string, readonly [resource: string, method: string]> = {
  getMe: ['me', 'get'],
  getKeyMember: ['me', 'keyMember'],

  listChannels: ['channels', 'list'],
  getChannelCapabilities: ['channels', 'capabilities'],

  createPost: ['posts', 'create'],
  validatePost: ['posts', 'validate'],
  listPosts: ['posts', 'list'],
  getPost: ['posts', 'get'],
  updatePost: ['posts', 'update'],
  deletePost: ['posts', 'delete'],
  retryPost: ['posts', 'retry'],
  approvePost: ['posts', 'approve'],
  rejectPost: ['posts', 'reject'],
  createPostsInBulk: ['posts', 'createMany'],
  importPosts: ['posts', 'importCsv'],
  exportPosts: ['posts', 'exportCsv'],
  getPostAnalytics: ['posts', 'analytics'],
  refreshPostAnalytics: ['posts', 'refreshAnalytics'],
  listPostComments: ['posts', 'comments'],
  refreshPostComments: ['posts', 'refreshComments'],

  createDraft: ['drafts', 'create'],
  listDrafts: ['drafts', 'list'],
  getDraft: ['drafts', 'get'],
  updateDraft: ['drafts', 'update'],
  deleteDraft: ['drafts', 'delete'],
  validateDraft: ['drafts', 'validate'],
  scheduleDraft: ['drafts', 'schedule'],

  createUpload: ['media', 'createUpload'],
  completeUpload: ['media', 'completeUpload'],
  getMedia: ['media', 'get'],

  getQueue: ['queues', 'get'],
  setQueue: ['queues', 'set'],

  createSeries: ['series', 'create'],
  listSeries: ['series', 'list'],
  getSeries: ['series', 'get'],
  updateSeries: ['series', 'update'],
  deleteSeries: ['series', 'delete'],

  createFeed: ['feeds', 'create'],
  listFeeds: ['feeds', 'list'],
  getFeed: ['feeds', 'get'],
  updateFeed: ['feeds', 'update'],
  deleteFeed: ['feeds', 'delete'],
  listFeedItems: ['feeds', 'items'],
  pollFeed: ['feeds', 'poll'],

  createTag: ['tags', 'create'],
  listTags: ['tags', 'list'],
  getTag: ['tags', 'get'],
  updateTag: ['tags', 'update'],
  deleteTag: ['tags', 'delete'],

  createWebhook: ['webhooks', 'create'],
  listWebhooks: ['webhooks', 'list'],
  getWebhook: ['webhooks', 'get'],
  updateWebhook: ['webhooks', 'update'],
  deleteWebhook: ['webhooks', 'delete'],
  rotateWebhookSecret: ['webhooks', 'rotateSecret'],
  testWebhook: ['webhooks', 'test'],
  listWebhookDeliveries: ['webhooks', 'deliveries'],
  redeliverWebhook: ['webhooks', 'redeliver'],

  listInbox: ['comments', 'inbox'],
  getComment: ['comments', 'get'],
  updateComment: ['comments', 'update'],
  replyToComment: ['comments', 'reply'],
  listCommentReplies: ['comments', 'replies'],
  hideComment: ['comments', 'hide'],
  unhideComment: ['comments', 'unhide'],

  getReply: ['replies', 'get'],
  deleteReply: ['replies', 'delete'],
  approveReply: ['replies', 'approve'],
  rejectReply: ['replies', 'reject'],

  getAnalytics: ['analytics', 'summary'],
  getBestTimes: ['channels', 'bestTimes'],

  listAuditEvents: ['audit', 'list'],

  generatePost: ['generate', 'post'],
  generateAltText: ['generate', 'altText'],
};
