-- CreateTable
CREATE TABLE "Tenant" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "ApiCredential" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "permissions" JSONB NOT NULL,
    "secretHash" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revokedAt" DATETIME,
    CONSTRAINT "ApiCredential_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Event" (
    "seq" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "subjectId" TEXT,
    "data" JSONB NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "Secret" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "nonce" BLOB NOT NULL,
    "ciphertext" BLOB NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" DATETIME
);

-- CreateTable
CREATE TABLE "SystemCheck" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "workflowId" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "workerId" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completedAt" DATETIME
);

-- CreateTable
CREATE TABLE "Site" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "ownerTenantId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "region" TEXT NOT NULL,
    "iamRegion" TEXT,
    "callerId" TEXT NOT NULL,
    "idempotencyKey" TEXT NOT NULL,
    "requestHash" TEXT NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "everReferenced" BOOLEAN NOT NULL DEFAULT false,
    "deletedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "Pool" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "class" TEXT NOT NULL,
    "policy" JSONB NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "idempotencyKey" TEXT,
    "deletedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "Node" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "poolId" TEXT,
    "role" TEXT NOT NULL,
    "provisionState" TEXT,
    "version" INTEGER NOT NULL DEFAULT 1,
    "deletedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "JoinToken" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "poolId" TEXT,
    "nodeId" TEXT,
    "role" TEXT NOT NULL,
    "secretHash" TEXT NOT NULL,
    "maxUses" INTEGER NOT NULL,
    "usesLeft" INTEGER NOT NULL,
    "expiresAt" DATETIME NOT NULL,
    "revokedAt" DATETIME,
    "idempotencyKey" TEXT,
    "requestHash" TEXT,
    "expectMac" TEXT,
    "workflowId" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "NodeCertificate" (
    "serial" TEXT NOT NULL PRIMARY KEY,
    "nodeId" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "siteId" TEXT,
    "fingerprint" TEXT NOT NULL,
    "notBefore" DATETIME NOT NULL,
    "notAfter" DATETIME NOT NULL,
    "revokedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "JoinRequest" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "mac" TEXT,
    "detail" JSONB,
    "expiresAt" DATETIME NOT NULL,
    "decidedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "BootLease" (
    "siteId" TEXT NOT NULL PRIMARY KEY,
    "holderNodeId" TEXT,
    "epoch" INTEGER NOT NULL DEFAULT 0,
    "expiresAt" DATETIME,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "Profile" (
    "tenantId" TEXT NOT NULL,
    "profileId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "document" JSONB NOT NULL,
    "visibility" TEXT NOT NULL,
    "lockedAt" DATETIME,
    "rowVersion" INTEGER NOT NULL DEFAULT 1,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,

    PRIMARY KEY ("tenantId", "profileId", "version")
);

-- CreateTable
CREATE TABLE "AgentSession" (
    "nodeId" TEXT NOT NULL PRIMARY KEY,
    "siteId" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "connectedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeenAt" DATETIME NOT NULL,
    "taskQueue" TEXT NOT NULL
);

-- CreateTable
CREATE TABLE "Image" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "ref" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "format" TEXT NOT NULL,
    "compression" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "sizeBytes" BIGINT NOT NULL,
    "source" TEXT NOT NULL,
    "signerId" TEXT,
    "signerTenantId" TEXT,
    "signature" TEXT,
    "verified" BOOLEAN NOT NULL DEFAULT false,
    "visibility" TEXT NOT NULL DEFAULT 'private',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    -- An unsigned image stays private to its tenant forever (spec 003).
    CONSTRAINT "Image_unsigned_private" CHECK ("visibility" = 'private' OR "verified" = true)
);

-- CreateTable
CREATE TABLE "ImageSigner" (
    "tenantId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "publicKeyPem" TEXT NOT NULL,
    "revokedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,

    PRIMARY KEY ("tenantId", "id")
);

-- CreateTable
CREATE TABLE "ImageLocation" (
    "imageId" TEXT NOT NULL,
    "siteId" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "sizeBytes" BIGINT NOT NULL,
    "pinnedUntil" DATETIME,
    "lastUsedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,

    PRIMARY KEY ("imageId", "siteId")
);

-- CreateTable
CREATE TABLE "NodeImageCache" (
    "nodeId" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "sizeBytes" BIGINT NOT NULL,
    "updatedAt" DATETIME NOT NULL,

    PRIMARY KEY ("nodeId", "sha256")
);

-- CreateIndex
CREATE INDEX "ApiCredential_tenantId_idx" ON "ApiCredential"("tenantId");

-- CreateIndex
CREATE UNIQUE INDEX "Event_id_key" ON "Event"("id");

-- CreateIndex
CREATE INDEX "Event_tenantId_seq_idx" ON "Event"("tenantId", "seq");

-- CreateIndex
CREATE INDEX "Site_ownerTenantId_idx" ON "Site"("ownerTenantId");

-- CreateIndex
CREATE INDEX "Pool_siteId_idx" ON "Pool"("siteId");

-- CreateIndex
CREATE UNIQUE INDEX "Pool_tenantId_idempotencyKey_key" ON "Pool"("tenantId", "idempotencyKey");

-- CreateIndex
CREATE INDEX "Node_siteId_idx" ON "Node"("siteId");

-- CreateIndex
CREATE INDEX "Node_poolId_idx" ON "Node"("poolId");

-- CreateIndex
CREATE INDEX "JoinToken_siteId_idx" ON "JoinToken"("siteId");

-- CreateIndex
CREATE UNIQUE INDEX "JoinToken_tenantId_idempotencyKey_key" ON "JoinToken"("tenantId", "idempotencyKey");

-- CreateIndex
CREATE UNIQUE INDEX "NodeCertificate_fingerprint_key" ON "NodeCertificate"("fingerprint");

-- CreateIndex
CREATE INDEX "NodeCertificate_nodeId_idx" ON "NodeCertificate"("nodeId");

-- CreateIndex
CREATE INDEX "JoinRequest_siteId_status_idx" ON "JoinRequest"("siteId", "status");

-- CreateIndex
CREATE INDEX "Profile_profileId_visibility_idx" ON "Profile"("profileId", "visibility");

-- CreateIndex
CREATE INDEX "Image_visibility_kind_idx" ON "Image"("visibility", "kind");

-- CreateIndex
CREATE UNIQUE INDEX "Image_tenantId_ref_key" ON "Image"("tenantId", "ref");

