-- CreateTable
CREATE TABLE "AgentRequestNonce" (
    "nodeId" TEXT NOT NULL,
    "nonce" TEXT NOT NULL,
    "expiresAt" DATETIME NOT NULL,

    PRIMARY KEY ("nodeId", "nonce")
);

-- CreateIndex
CREATE INDEX "AgentRequestNonce_expiresAt_idx" ON "AgentRequestNonce"("expiresAt");

