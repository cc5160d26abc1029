-- AlterTable
ALTER TABLE "AgentSession" ADD COLUMN "siteStatus" JSONB;

