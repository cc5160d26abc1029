-- AlterTable
ALTER TABLE "ApiCredential" ADD COLUMN "expiresAt" DATETIME;
ALTER TABLE "ApiCredential" ADD COLUMN "rotatedAt" DATETIME;

